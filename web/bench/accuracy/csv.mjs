// A small RFC 4180 CSV reader for the validation files: quoted fields with commas, doubled quotes,
// CRLF or LF line ends. Header names and cells are trimmed (the Justus files write ", imsize, ...").

/**
 * @param {string} text
 * @returns {string[][]} rows of cells; a trailing newline adds no row, blank lines are dropped
 */
export function parseCsvRows(text) {
  /** @type {string[][]} */
  const rows = [];
  /** @type {string[]} */
  let row = [];
  let field = '';
  let quoted = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const endRow = () => {
    row.push(field);
    if (row.length > 1 || row[0] !== '') rows.push(row);
    row = [];
    field = '';
  };
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (c === '"') {
        quoted = false;
        i += 1;
      } else {
        field += c;
        i += 1;
      }
    } else if (c === '"') {
      quoted = true;
      i += 1;
    } else if (c === ',') {
      row.push(field);
      field = '';
      i += 1;
    } else if (c === '\r' || c === '\n') {
      endRow();
      i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
    } else {
      field += c;
      i += 1;
    }
  }
  if (quoted) throw new Error('CSV ends inside a quoted field');
  if (field !== '' || row.length > 0) endRow();
  return rows;
}

/**
 * Rows as objects keyed by the (trimmed) header. A row with more cells than the header is an error;
 * missing trailing cells read as ''.
 * @param {string} text
 * @param {string} what file name for error messages
 * @returns {Record<string, string>[]}
 */
export function parseCsvObjects(text, what) {
  const [header, ...rows] = parseCsvRows(text);
  if (!header) throw new Error(`${what}: empty CSV`);
  const names = header.map((name) => name.trim());
  return rows.map((cells, index) => {
    if (cells.length > names.length && cells.slice(names.length).some((cell) => cell.trim() !== '')) {
      throw new Error(`${what}: line ${index + 2} has ${cells.length} cells, the header ${names.length}`);
    }
    /** @type {Record<string, string>} */
    const record = {};
    names.forEach((name, column) => {
      record[name] = (cells[column] ?? '').trim();
    });
    return record;
  });
}
