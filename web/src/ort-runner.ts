// The learned predictors in the browser: ONNX Runtime Web's CPU wasm backend (one thread, no proxy
// worker, its wasm handed over as bytes so nothing is fetched from a CDN) running the class models
// of models/artifacts. The bytes come from `virtual:prenet-learned-assets` (vite.config.ts): hashed
// files beside the engine script on the site, gzip+base64 text inside the one-file build.
// Node does the same with the same package (web/cli/node-engine.mjs), so both give identical numbers.

import * as ort from 'onnxruntime-web/wasm';
import type { LearnedAssets } from 'virtual:prenet-learned-assets';
import type { ModelRunner } from './types';

/**
 * Creates every session up front, so that a missing or broken model fails here (and the engine falls
 * back to the roofline, saying so) rather than in the middle of a prediction.
 */
export async function loadOrtModels(assets: LearnedAssets): Promise<ModelRunner> {
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.proxy = false;
  ort.env.wasm.wasmBinary = await assets.wasm();
  const sessions = new Map<string, ort.InferenceSession>();
  // One after another: sessions of one wasm instance are created on one thread anyway.
  for (const dataset of assets.datasets) {
    sessions.set(dataset, await ort.InferenceSession.create(await assets.model(dataset)));
  }
  return {
    async run(dataset, features, rows, width) {
      const session = sessions.get(dataset);
      if (session === undefined) throw new Error(`no learned model for "${dataset}"`);
      const out = await session.run({ features: new ort.Tensor('float32', features, [rows, width]) });
      const y = out['y'];
      if (y === undefined) throw new Error(`${dataset}.onnx has no output "y"`);
      return y.data as Float32Array;
    },
  };
}
