// Minimal RFC 4180 CSV reader (quoted fields, doubled quotes, CRLF or LF) and helpers for the raw
// measurement files. No dependencies beyond node: builtins.

import { readFileSync } from 'node:fs';

/** Parses CSV text into an array of rows (arrays of strings). A trailing newline adds no row. */
export function parseCsv(text) {
  const rows = [];
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

/** Reads a CSV file with a header row; returns {header, records} where records are objects. */
export function readCsvObjects(path) {
  const rows = parseCsv(readFileSync(path, 'utf8'));
  if (rows.length === 0) throw new Error(`${path}: empty file`);
  const header = rows[0].map((h) => h.trim());
  const records = [];
  for (let r = 1; r < rows.length; r++) {
    const cells = rows[r];
    if (cells.length === 1 && cells[0] === '') continue; // blank line
    if (cells.length !== header.length) {
      throw new Error(`${path}: line ${r + 1} has ${cells.length} fields, header has ${header.length}`);
    }
    const rec = {};
    for (let c = 0; c < header.length; c++) rec[header[c]] = cells[c];
    rec.__line = r + 1;
    records.push(rec);
  }
  return { header, records };
}

/** Reads a CSV file as raw rows (for the multi-table DeepBench sheets). */
export function readCsvRows(path) {
  return parseCsv(readFileSync(path, 'utf8'));
}

/** Quotes a value for CSV output only when it needs it. */
export function csvField(s) {
  const str = String(s);
  return /[",\r\n]/.test(str) ? `"${str.replace(/"/g, '""')}"` : str;
}
