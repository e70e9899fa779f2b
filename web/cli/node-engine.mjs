// The shared engine (web/src/engine.js) wired to the wasm build on disk, for the CLI and Node tests.
//
// The module is built for ENVIRONMENT=web,worker (a `node` build breaks under Node 20 ES modules:
// "__dirname is not defined"). A single-file build carries its wasm as a data: URL that Emscripten
// decodes itself in Node; if a separate prenet_core.wasm sits beside it, we read the bytes and pass
// them as `wasmBinary`, because Node's fetch cannot read file: URLs.

import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createEngine } from '../src/engine.js';
import { createOrtRunner } from '../src/ort-runner.js';

/** Located relative to this file, so `npx prenet` works from any working directory. */
export const CORE_URL = new URL('../../build/wasm/prenet_core.mjs', import.meta.url);
const WASM_URL = new URL('../../build/wasm/prenet_core.wasm', import.meta.url);

/** @returns {Promise<import('../src/types').PrenetCoreModule>} */
export async function loadNodeCore() {
  const corePath = fileURLToPath(CORE_URL);
  if (!existsSync(corePath)) {
    throw new Error(`wasm core not built: ${corePath} is missing (run: npm run build:wasm)`);
  }
  const imported = /** @type {{ default: import('../src/types').PrenetCoreFactory }} */ (
    await import(pathToFileURL(corePath).href)
  );
  const wasmPath = fileURLToPath(WASM_URL);
  const options = existsSync(wasmPath) ? { wasmBinary: await readFile(wasmPath) } : {};
  return imported.default(options);
}

const MODELS_URL = new URL('../../models/artifacts/', import.meta.url);

/**
 * The learned predictors from models/artifacts, run by ONNX Runtime (onnxruntime-web's Node build,
 * the same package, operators and runner as the page). Null when the artifacts or the package are missing.
 * @returns {Promise<import('../src/types').ModelRunner | null>}
 */
export async function loadNodeModels() {
  const manifestPath = fileURLToPath(new URL('manifest.json', MODELS_URL));
  if (!existsSync(manifestPath)) return null;
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  return createOrtRunner(ort, (dataset) => readFile(fileURLToPath(new URL(`${dataset}.onnx`, MODELS_URL))));
}

export const engine = createEngine(loadNodeCore, loadNodeModels);
