// Turns text pasted into the page's config box into the request's `model` (docs/API.md): a layer
// list `{"layers": [...], "input": {...}}`, a Hugging Face config.json (sent as `hf_config`), an
// architecture as a response's `model.architecture` gives it (sent as `architecture`), Keras
// `model.to_json()` (sent as `keras`) or a dropped .onnx file (config-input.ts writes it as
// `{"onnx_base64": ..., "name": ...}`).
// Only the kind is decided here; the core validates the content and names the faulty field.
// Plain JS with JSDoc types (see engine.js) so the Node tests cover it.

import { nonFiniteNote, parseConfigJson } from './config-json.js';

/** Keys that mark a Hugging Face config.json: every HF config has model_type; GPT-2-era ones
 * also use n_embd, most others hidden_size. */
const HF_KEYS = ['model_type', 'n_embd', 'hidden_size'];

/**
 * @typedef {{ ok: true, model: import('./types').ModelSpec, description: string }
 *   | { ok: false, message: string }} ConfigReading
 * @typedef {import('./types').ModelFormEntry['key']} ModelFormKey
 * @typedef {{ form: ModelFormKey, describe(object: import('./types').JsonObject): string | null, wrapped: boolean }} Recogniser
 *   `describe` says what the object is when it is text of that form, else null; a `wrapped` form is
 *   sent as `{[form]: object}`, the others hold their form's key themselves and pass through.
 */

/**
 * How pasted text of each model form (the catalogue's model_forms, by key) is told apart, in the order
 * tried; a preset is picked from the list, never pasted.
 * @type {Recogniser[]}
 */
const RECOGNISERS = [
  {
    // The architecture form (docs/MODEL_FORMAT.md), as a response's model.architecture echoes it: it names
    // its family and, unlike a config.json, no model_type. Tried first: it has a
    // per-layer plan under "layers" (not a layer list) and hidden_size (not a config.json).
    form: 'architecture',
    wrapped: true,
    describe(object) {
      if (typeof object.family !== 'string' || 'model_type' in object) return null;
      const layers = typeof object.num_hidden_layers === 'number' ? `, ${object.num_hidden_layers} layers` : '';
      return `architecture (family "${object.family}"${layers})`;
    },
  },
  {
    form: 'layers',
    wrapped: false,
    describe(object) {
      if (!('layers' in object)) return null;
      const count = Array.isArray(object.layers) ? object.layers.length : 0;
      // Passed through as-is: the core checks "layers" and "input" and names the field at fault.
      return `layer list, ${count} ${count === 1 ? 'entry' : 'entries'}`;
    },
  },
  {
    form: 'onnx_base64',
    wrapped: false,
    describe(object) {
      if (typeof object.onnx_base64 !== 'string') return null;
      return `ONNX graph without weights (${Math.ceil((object.onnx_base64.length * 3) / 4 / 1024)} KiB)`;
    },
  },
  {
    form: 'keras',
    wrapped: true,
    describe(object) {
      const keras = typeof object.class_name === 'string' && typeof object.config === 'object' && object.config !== null;
      return keras ? `Keras model (${object.class_name})` : null;
    },
  },
  {
    form: 'hf_config',
    wrapped: true,
    describe(object) {
      if (!HF_KEYS.some((key) => key in object)) return null;
      return `Hugging Face config${typeof object.model_type === 'string' ? ` (model_type "${object.model_type}")` : ''}`;
    },
  },
];

/**
 * @param {string} text non-empty pasted text
 * @param {ReadonlyArray<{ key: string }>} forms the model forms the core reads (its catalogue's `model_forms`)
 * @returns {ConfigReading} an error message names the problem and starts with "config:"
 */
export function readModelConfig(text, forms) {
  const parsed = parseConfigJson(text);
  if (!parsed.ok) return { ok: false, message: `config: not valid JSON (${parsed.reason})` };
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, message: 'config: expected a JSON object, not ' + describeJson(value) };
  }
  const object = /** @type {import('./types').JsonObject} */ (value);
  for (const { form, describe, wrapped } of RECOGNISERS) {
    if (!forms.some((f) => f.key === form)) continue;
    const description = describe(object);
    if (description === null) continue;
    const model = /** @type {import('./types').ModelSpec} */ (wrapped ? { [form]: object } : object);
    const note = nonFiniteNote(parsed.nonFinite);
    return { ok: true, model, description: note ? `${description}; ${note}` : description };
  }
  return {
    ok: false,
    message:
      'config: not recognised: expected a layer list (an object with "layers"), a Hugging Face ' +
      'config.json (with "model_type", "hidden_size" or "n_embd"), an architecture (with "family"), Keras model.to_json() (with ' +
      '"class_name" and "config") or an .onnx file',
  };
}

/** @param {unknown} value */
function describeJson(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
