// Turns text pasted into the page's config box into the request's `model` (docs/API.md): a layer
// list `{"layers": [...], "input": {...}}`, a Hugging Face config.json (sent as `hf_config`), Keras
// `model.to_json()` (sent as `keras`) or a dropped .onnx file (config-input.ts writes it as
// `{"onnx_base64": ..., "name": ...}`).
// Only the kind is decided here; the core validates the content and names the faulty field.
// Plain JS with JSDoc types (see engine.js) so the Node tests cover it.

/** Keys that mark a Hugging Face config.json: every HF config has model_type; GPT-2-era ones
 * also use n_embd, most others hidden_size. */
const HF_KEYS = ['model_type', 'n_embd', 'hidden_size'];

/**
 * @typedef {{ ok: true, model: import('./types').ModelSpec, description: string }
 *   | { ok: false, message: string }} ConfigReading
 */

/**
 * @param {string} text non-empty pasted text
 * @returns {ConfigReading} an error message names the problem and starts with "config:"
 */
export function readModelConfig(text) {
  /** @type {unknown} */
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, message: `config: not valid JSON (${reason})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, message: 'config: expected a JSON object, not ' + describeJson(value) };
  }
  const object = /** @type {import('./types').JsonObject} */ (value);
  if ('layers' in object) {
    const count = Array.isArray(object.layers) ? object.layers.length : 0;
    // Passed through as-is: the core checks "layers" and "input" and names the field at fault.
    const model = /** @type {import('./types').ModelSpec} */ (object);
    return { ok: true, model, description: `layer list, ${count} ${count === 1 ? 'entry' : 'entries'}` };
  }
  if (typeof object.onnx_base64 === 'string') {
    const model = /** @type {import('./types').ModelSpec} */ (object);
    const kib = Math.ceil((object.onnx_base64.length * 3) / 4 / 1024);
    return { ok: true, model, description: `ONNX graph without weights (${kib} KiB)` };
  }
  if (typeof object.class_name === 'string' && typeof object.config === 'object' && object.config !== null) {
    return { ok: true, model: { keras: object }, description: `Keras model (${object.class_name})` };
  }
  if (HF_KEYS.some((key) => key in object)) {
    const type = typeof object.model_type === 'string' ? ` (model_type "${object.model_type}")` : '';
    return { ok: true, model: { hf_config: object }, description: `Hugging Face config${type}` };
  }
  return {
    ok: false,
    message:
      'config: not recognised: expected a layer list (an object with "layers"), a Hugging Face ' +
      'config.json (with "model_type", "hidden_size" or "n_embd"), Keras model.to_json() (with ' +
      '"class_name" and "config") or an .onnx file',
  };
}

/** @param {unknown} value */
function describeJson(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
