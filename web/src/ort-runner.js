// The one ONNX Runtime runner of the learned predictors, for every host of the engine: the page's
// worker and the embedded element (learned-models.ts: ONNX Runtime Web's wasm build, the model bytes
// bundled by vite.config.ts) and Node (web/cli/node-engine.mjs: the same package's Node build, the
// files of models/artifacts). Same package, same operators, same float32 input: identical numbers.
//
// Plain JavaScript with JSDoc types, because the CLI runs this very file under Node 20.

/**
 * @typedef {typeof import('onnxruntime-web')} Ort
 * @typedef {import('onnxruntime-web').InferenceSession} InferenceSession
 * @typedef {import('./types').ModelRunner} ModelRunner
 * @typedef {ModelRunner & { open(datasets: readonly string[]): Promise<void> }} OrtRunner
 */

/**
 * Runs each dataset's class model (input `features`: rows × width float32; output `y`), creating its
 * session on first use and keeping it; `open` creates sessions up front, so a broken model fails there.
 * @param {Ort} ort ONNX Runtime, its `env` already set by the host
 * @param {(dataset: string) => Promise<Uint8Array>} modelBytes the ONNX file of a dataset
 * @returns {OrtRunner}
 */
export function createOrtRunner(ort, modelBytes) {
  /** @type {Map<string, Promise<InferenceSession>>} */
  const sessions = new Map();
  /** @param {string} dataset */
  const session = (dataset) => {
    let created = sessions.get(dataset);
    if (created === undefined) {
      created = modelBytes(dataset).then((bytes) => ort.InferenceSession.create(bytes));
      sessions.set(dataset, created);
    }
    return created;
  };
  return {
    async open(datasets) {
      // All the files are asked for at once (they download in parallel); the sessions are created as
      // their bytes arrive, on ONNX Runtime's one thread. Every session is awaited, so one broken model
      // fails `open` with its own error.
      await Promise.all(datasets.map((dataset) => session(dataset)));
    },
    async run(dataset, features, rows, width) {
      const out = await (await session(dataset)).run({ features: new ort.Tensor('float32', features, [rows, width]) });
      const y = out['y'];
      if (y === undefined) throw new Error(`${dataset}.onnx has no output "y"`);
      return /** @type {Float32Array} */ (y.data);
    },
  };
}
