// Reads the text of a pasted or loaded config file as JSON, and also as Python writes it: `json.dumps`
// (and so transformers' `save_pretrained` before version 5) spells the floats JSON has no literal for
// as the bare words `Infinity`, `-Infinity` and `NaN` (Mamba-2 configs carry
// `"time_step_limit": [0.0, Infinity]`). Strict JSON readers, the browser's and the core's, refuse the
// whole file for it. Here such a word becomes the text "Infinity" (or "-Infinity", "NaN") and its place
// is reported, so the caller can say so: the core then reads the field as text, and a field it reads as
// a number is refused with that field's name, never silently given a made-up number.
// Plain JS with JSDoc types (see engine.js) so the page and the CLI share it.

/** Marks a replaced word until the parse is done; cannot occur in a parsed JSON string. */
const MARK = '\u0000prenet-nonfinite:';
const WORDS = ['-Infinity', 'Infinity', 'NaN'];

/**
 * @typedef {{ ok: true, value: unknown, nonFinite: string[] } | { ok: false, reason: string }} JsonReading
 *   nonFinite: where Python's words were read as text, as paths (`time_step_limit[1]`); empty for plain JSON
 */

/**
 * @param {string} text
 * @returns {JsonReading} the reason is the strict parser's message when the text is not JSON either way
 */
export function parseConfigJson(text) {
  try {
    return { ok: true, value: JSON.parse(text), nonFinite: [] };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const quoted = quoteNonFiniteWords(text);
    if (quoted === null) return { ok: false, reason };
    let value;
    try {
      value = JSON.parse(quoted);
    } catch {
      return { ok: false, reason };
    }
    /** @type {string[]} */
    const nonFinite = [];
    return { ok: true, value: unmark(value, '', nonFinite), nonFinite };
  }
}

/**
 * The text with each of Python's non-finite words outside strings written as a marked JSON string,
 * or null when there is none (so the strict parser's error stands).
 * @param {string} text
 */
function quoteNonFiniteWords(text) {
  let out = '';
  let found = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end;
      continue;
    }
    const word = WORDS.find((w) => text.startsWith(w, i) && !isWordChar(text[i - 1]) && !isWordChar(text[i + w.length]));
    if (word !== undefined) {
      out += JSON.stringify(MARK + word);
      i += word.length;
      found = true;
      continue;
    }
    out += c;
    i += 1;
  }
  return found ? out : null;
}

/** Index just past the JSON string starting at `start` (a quote), or the text's end if unterminated. */
function stringEnd(/** @type {string} */ text, /** @type {number} */ start) {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return Math.min(i + 1, text.length);
}

/** @param {string | undefined} c */
function isWordChar(c) {
  return c !== undefined && /[A-Za-z0-9_.]/.test(c);
}

/**
 * The parsed value with the marks taken off, each marked place recorded in `places`.
 * @param {unknown} value @param {string} path @param {string[]} places
 * @returns {unknown}
 */
function unmark(value, path, places) {
  if (typeof value === 'string' && value.startsWith(MARK)) {
    places.push(path || '(the whole file)');
    return value.slice(MARK.length);
  }
  if (Array.isArray(value)) return value.map((item, index) => unmark(item, `${path}[${index}]`, places));
  if (typeof value === 'object' && value !== null) {
    /** @type {Record<string, unknown>} */
    const out = {};
    for (const [key, item] of Object.entries(value)) out[key] = unmark(item, path ? `${path}.${key}` : key, places);
    return out;
  }
  return value;
}

/**
 * The sentence a reading adds when Python's words were met, or '' when there were none.
 * @param {readonly string[]} nonFinite
 */
export function nonFiniteNote(nonFinite) {
  if (nonFinite.length === 0) return '';
  const shown = nonFinite.slice(0, 3).join(', ') + (nonFinite.length > 3 ? ` and ${nonFinite.length - 3} more` : '');
  return `Python's Infinity/NaN (not JSON) at ${shown}, passed on as text`;
}
