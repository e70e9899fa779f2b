// The catalogue's training table names a section's fields "section.member" ("finetune.rank"); scenarios,
// links and CLI flags hold them flat under those keys, and the request nests them (docs/API.md "Options").

/**
 * The request's training object for a flat one: "a.b" keys become member b of object a, merged into
 * what `base` already holds there (a request file's own section).
 * @param {Record<string, unknown>} flat
 * @param {Record<string, unknown>} [base]
 * @returns {Record<string, unknown>}
 */
export function nestTraining(flat, base = {}) {
  /** @type {Record<string, unknown>} */
  const out = { ...base };
  for (const [key, value] of Object.entries(flat)) {
    const dot = key.indexOf('.');
    if (dot < 0) {
      out[key] = value;
      continue;
    }
    const section = key.slice(0, dot);
    const held = out[section];
    const inner = typeof held === 'object' && held !== null && !Array.isArray(held) ? { ...held } : {};
    /** @type {Record<string, unknown>} */ (inner)[key.slice(dot + 1)] = value;
    out[section] = inner;
  }
  return out;
}
