// The request's `model` from a file named on the command line: `--onnx model.onnx` (read in slices and
// skimmed to its graph structure, so a model with gigabytes of weights never sits in memory), `--keras
// model.json` (Keras `model.to_json()`) or `--hf config.json` (a Hugging Face config). The core checks the
// content and names the faulty field; here only reading the file can fail.

import { open, readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { nonFiniteNote, parseConfigJson } from '../src/config-json.js';
import { PrenetError } from '../src/engine.js';
import { skimOnnx, toBase64 } from '../src/onnx-skim.js';

/** The model flags, each a file path; at most one of them (or --preset) per request. */
export const MODEL_FILE_FLAGS = /** @type {const} */ (['onnx', 'keras', 'hf']);

/**
 * @param {string} flag
 * @param {string} path
 * @param {unknown} error
 */
function cannotRead(flag, path, error) {
  const reason = error instanceof Error ? error.message : String(error);
  return new PrenetError(`--${flag}`, `--${flag}: cannot read ${path}: ${reason}`);
}

/**
 * The ONNX file at `path`, skimmed (docs/MODEL_FORMAT.md, ONNX files), as the request's model.
 * @param {string} path
 */
export async function onnxModel(path) {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw cannotRead('onnx', path, error);
  }
  try {
    const { size } = await handle.stat();
    const file = handle;
    const skimmed = await skimOnnx(async (offset, length) => {
      const buffer = new Uint8Array(length);
      const { bytesRead } = await file.read(buffer, 0, length, offset);
      return buffer.subarray(0, bytesRead);
    }, size);
    return { onnx_base64: toBase64(skimmed.bytes), name: basename(path).replace(/\.onnx$/i, '') };
  } catch (error) {
    if (error instanceof PrenetError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new PrenetError('--onnx', `--onnx: ${path}: ${reason}`);
  } finally {
    await handle.close();
  }
}

/**
 * The JSON file at `path` for --keras or --hf. Keras JSON that does not parse is passed on as text, so the
 * core reports it (`model.keras: malformed JSON ...`); a config.json must be an object.
 * @param {'keras' | 'hf'} flag
 * @param {string} path
 */
async function jsonModel(flag, path) {
  let text;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw cannotRead(flag, path, error);
  }
  if (flag === 'keras') {
    try {
      return { keras: JSON.parse(text) };
    } catch {
      return { keras: text };
    }
  }
  const parsed = parseConfigJson(text);
  if (!parsed.ok) throw new PrenetError('--hf', `--hf: ${path} is not valid JSON (${parsed.reason})`);
  const value = parsed.value;
  if (parsed.nonFinite.length > 0) process.stderr.write(`prenet: --hf ${path}: ${nonFiniteNote(parsed.nonFinite)}\n`);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new PrenetError('--hf', `--hf: ${path} must hold a JSON object (a Hugging Face config.json)`);
  }
  return { hf_config: value };
}

/**
 * The model named by --onnx, --keras or --hf, or undefined when none is given.
 * @param {Map<string, string>} values the command line's value flags
 * @returns {Promise<Record<string, unknown> | undefined>}
 */
export async function modelFromFlags(values) {
  const given = ['preset', ...MODEL_FILE_FLAGS].filter((flag) => values.has(flag));
  if (given.length > 1) {
    throw new PrenetError(`--${given[1]}`, `--${given[1]}: give one model (--preset, --onnx, --keras or --hf), not ${given.map((f) => `--${f}`).join(' and ')}`);
  }
  const path = values.get('onnx');
  if (path !== undefined) return onnxModel(path);
  for (const flag of /** @type {const} */ (['keras', 'hf'])) {
    const file = values.get(flag);
    if (file !== undefined) return jsonModel(flag, file);
  }
  return undefined;
}
