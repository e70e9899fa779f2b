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

/**
 * The section of a row of the training table ("finetune" for "finetune.rank"), or null for a plain member.
 * @param {{ key: string }} option
 * @returns {string | null}
 */
export function optionSection(option) {
  const dot = option.key.indexOf('.');
  return dot < 0 ? null : option.key.slice(0, dot);
}

/** How the page titles a section's group of fields; a section not named here is shown by its key. */
export const SECTION_LEGENDS = /** @type {Readonly<Record<string, string>>} */ ({ finetune: 'Fine-tuning' });

/**
 * Fields of a section that apply only to some values of the section's choice (its switch): the page shows
 * them only then, and leaves them out of the scenario while hidden. Fields not listed always apply.
 * LoRA's shape is read only by lora and qlora; the frozen weights' storage by every method that freezes
 * weights; the number of trained blocks by freeze (docs/API.md, training.finetune).
 * @type {Readonly<Record<string, { switch: string, values: readonly string[] }>>}
 */
export const SHOWN_WHEN = {
  'finetune.rank': { switch: 'finetune.method', values: ['lora', 'qlora'] },
  'finetune.alpha': { switch: 'finetune.method', values: ['lora', 'qlora'] },
  'finetune.dropout': { switch: 'finetune.method', values: ['lora', 'qlora'] },
  'finetune.targets': { switch: 'finetune.method', values: ['lora', 'qlora'] },
  'finetune.base_precision': { switch: 'finetune.method', values: ['lora', 'qlora', 'freeze'] },
  'finetune.trainable_layers': { switch: 'finetune.method', values: ['freeze'] },
};

/**
 * Whether training option `option` applies given the flat training values chosen (SHOWN_WHEN): its
 * switch's value, or the switch's default when unset, is one of the values it applies to.
 * @param {{ key: string }} option
 * @param {Record<string, unknown>} training flat keys ("finetune.method")
 * @param {readonly { key: string, default: unknown }[]} options the catalogue's table, for the switch's default
 */
export function optionApplies(option, training, options) {
  const rule = SHOWN_WHEN[option.key];
  if (rule === undefined) return true;
  const chosen = training[rule.switch] ?? options.find((row) => row.key === rule.switch)?.default;
  return rule.values.includes(String(chosen));
}

/**
 * A names option's value from comma-separated text (a box, a link, a CLI flag): undefined for no name,
 * the name itself for one ("all-linear", which the core also takes as a string), else the list.
 * @param {string} text
 * @returns {string | string[] | undefined}
 */
export function parseNames(text) {
  const names = text.split(',').map((name) => name.trim()).filter((name) => name !== '');
  if (names.length === 0) return undefined;
  return names.length === 1 ? names[0] : names;
}

/**
 * A names value as comma-separated text (parseNames' inverse): "q_proj,v_proj", "all-linear".
 * @param {unknown} value
 * @param {string} [separator]
 */
export function namesText(value, separator = ',') {
  return Array.isArray(value) ? value.map(String).join(separator) : value === undefined || value === null ? '' : String(value);
}

/** How the summary names a method that trains adapters. */
const METHOD_NAMES = /** @type {Readonly<Record<string, string>>} */ ({ lora: 'LoRA', qlora: 'QLoRA' });

/**
 * The fine-tune the core read (the response's training echo, `training.finetune`), in a few words for the
 * page's summary and the element's line (describe.ts): "LoRA r16 on q_proj, v_proj, NF4 base", "QLoRA r16
 * on all linear layers", "freeze: top 4 blocks"; null for a full fine-tune (every weight trains) or when the
 * core echoes none.
 * @param {{ finetune?: import('./types').FinetuneSpec }} training
 * @returns {string | null}
 */
export function finetuneSetting(training) {
  const tune = training.finetune;
  if (tune === undefined || tune.method === undefined || tune.method === 'full') return null;
  const base = tune.base_precision === undefined ? '' : `, ${tune.base_precision.toUpperCase()} base`;
  if (tune.method === 'freeze') {
    const blocks = tune.trainable_layers;
    return `freeze: ${blocks === undefined ? 'some blocks train' : `top ${blocks} block${blocks === 1 ? '' : 's'}`}${base}`;
  }
  const targets = Array.isArray(tune.targets) ? tune.targets : tune.targets === undefined ? [] : [tune.targets];
  const on = targets.length === 1 && targets[0] === 'all-linear' ? 'all linear layers' : targets.join(', ');
  const rank = tune.rank === undefined ? '' : ` r${tune.rank}`;
  return `${METHOD_NAMES[tune.method] ?? tune.method}${rank}${on === '' ? '' : ` on ${on}`}${base}`;
}
