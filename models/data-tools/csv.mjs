// The one CSV reader of the repository: RFC 4180 (quoted fields with commas, doubled quotes, CRLF
// or LF line ends), for the raw measurement files (models/build-data.mjs), the measured runs and the
// validation files of the benchmarks (web/bench). No dependencies beyond node: builtins.

import { readFileSync } from 'node:fs';

/**
 * Parses CSV text into an array of rows (arrays of strings). A trailing newline adds no row.
 * @param {string} text
 * @returns {string[][]}
 */
export function parseCsv(text) {
  /** @type {string[][]} */
  const rows = [];
  /** @type {string[]} */
  let row = [];
  let field = '';
  let i = 0;
  let quoted = false;
  if (text.charCodeAt(0) === 0xfeff) i = 1; // byte-order mark
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i += 1;
        continue;
      }
      field += c;
      i += 1;
      continue;
    }
    if (c === '"') {
      quoted = true;
      i += 1;
    } else if (c === ',') {
      row.push(field);
      field = '';
      i += 1;
    } else if (c === '\r' || c === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
    } else {
      field += c;
      i += 1;
    }
  }
  if (quoted) throw new Error('CSV ends inside a quoted field');
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** @typedef {Record<string, string> & {__line: number}} CsvRecord one data line by column name, and its line number */

/**
 * Parses CSV text with a header row; `where` names the source in errors.
 * @param {string} text
 * @param {string} where
 * @returns {{header: string[], records: CsvRecord[]}}
 */
export function parseCsvObjects(text, where) {
  const [first, ...rest] = parseCsv(text);
  if (!first) throw new Error(`${where}: empty file`);
  const header = first.map((h) => h.trim());
  /** @type {CsvRecord[]} */
  const records = [];
  rest.forEach((cells, i) => {
    if (cells.length === 1 && cells[0] === '') return; // blank line
    if (cells.length !== header.length) {
      throw new Error(`${where}: line ${i + 2} has ${cells.length} fields, header has ${header.length}`);
    }
    const rec = /** @type {CsvRecord} */ (/** @type {unknown} */ ({}));
    header.forEach((h, c) => (rec[h] = /** @type {string} */ (cells[c])));
    rec.__line = i + 2;
    records.push(rec);
  });
  return { header, records };
}

/**
 * The rows of CSV text without its blank lines.
 * @param {string} text
 * @returns {string[][]}
 */
export function parseCsvRows(text) {
  return parseCsv(text).filter((row) => row.length > 1 || row[0] !== '');
}

/**
 * Rows as objects keyed by the header, header names and cells trimmed (the Justus files write
 * ", imsize, ..."), for files others wrote: missing trailing cells read as '', and only blank cells
 * may follow the header's last column.
 * @param {string} text
 * @param {string} what file name for error messages
 * @returns {Record<string, string>[]}
 */
export function parseTrimmedCsvObjects(text, what) {
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

/**
 * Reads a CSV file with a header row; returns {header, records} where records are objects.
 * @param {string} path
 */
export function readCsvObjects(path) {
  return parseCsvObjects(readFileSync(path, 'utf8'), path);
}

/**
 * Reads a CSV file as raw rows (for the multi-table DeepBench sheets).
 * @param {string} path
 */
export function readCsvRows(path) {
  return parseCsv(readFileSync(path, 'utf8'));
}

/**
 * Quotes a value for CSV output only when it needs it.
 * @param {string | number} s
 */
export function csvField(s) {
  const str = String(s);
  return /[",\r\n]/.test(str) ? `"${str.replace(/"/g, '""')}"` : str;
}
