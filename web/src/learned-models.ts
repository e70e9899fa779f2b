// The learned predictors in the browser, for the page's worker (engine-worker.ts) and the embedded
// element (embed.ts): ONNX Runtime Web's CPU wasm backend (one thread, no proxy worker, its wasm
// named by its self-hosted URL or handed over as bytes, so nothing is fetched from a CDN) running the class models of
// models/artifacts through the shared runner (ort-runner.js). The bytes come from
// `virtual:prenet-learned-assets` (vite.config.ts): hashed files beside the engine script on the
// site, gzip+base64 text inside the one-file build.

import * as ort from 'onnxruntime-web/wasm';
import type { LearnedAssets } from 'virtual:prenet-learned-assets';
import { createOrtRunner } from './ort-runner.js';
import type { ModelRunner } from './types';

/**
 * Creates every session up front, so that a missing or broken model fails here (and the engine falls
 * back to the roofline, saying so) rather than in the middle of a prediction.
 */
export async function loadOrtModels(assets: LearnedAssets): Promise<ModelRunner> {
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.proxy = false;
  // From a URL ONNX Runtime compiles its 12 MB wasm while it streams in (instantiateStreaming);
  // inlined bytes are compiled after unpacking.
  if (assets.wasmUrl !== null) ort.env.wasm.wasmPaths = { wasm: assets.wasmUrl };
  else ort.env.wasm.wasmBinary = await assets.wasm();
  const runner = createOrtRunner(ort, (dataset) =>
    assets.datasets.includes(dataset) ? assets.model(dataset) : Promise.reject(new Error(`no learned model for "${dataset}"`)),
  );
  try {
    await runner.open(assets.datasets);
  } catch (error) {
    throw (assets.wasmUrl !== null ? await unfetchable(assets.wasmUrl) : null) ?? error;
  }
  return runner;
}

/**
 * Why a URL cannot be fetched (its HTTP status), or null when it can: ONNX Runtime fetches its wasm
 * itself and reports a missing file only as bytes that are not wasm, so a failed load asks once more.
 */
async function unfetchable(url: string): Promise<Error | null> {
  const name = url.slice(url.lastIndexOf('/') + 1);
  try {
    const response = await fetch(url, { method: 'HEAD' });
    return response.ok ? null : new Error(`${name}: HTTP ${response.status}`);
  } catch (error) {
    return new Error(`${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The learned models of one host, loaded once, and where that stands. */
export interface LearnedLoader {
  /** Loads them on the first call; never rejects: a failure resolves to null and sets `problem`. */
  load(): Promise<ModelRunner | null>;
  /** True once they have loaded or failed to. */
  readonly settled: boolean;
  /** Why they are not in use (null when they are, or while they load). */
  readonly problem: string | null;
}

export interface LearnedLoaderOptions {
  /** Loads the models; rejects with the reason they cannot be used. */
  open: () => Promise<ModelRunner>;
  /** The problem sentence for a failed load's reason, in the host's wording. */
  problem: (reason: string) => string;
  /** Names the host in the console warning ("prenet", "prenet-calculator"). */
  tag: string;
  /** A reason known without trying (the build carries no models): settled from the start. */
  unavailable?: string | null;
  /** Called once the load has settled. */
  onSettled?: () => void;
}

/** One host's lazy, once-only load of the learned models, falling back to the roofline on failure. */
export function learnedLoader(options: LearnedLoaderOptions): LearnedLoader {
  const unavailable = options.unavailable ?? null;
  let problem = unavailable;
  let settled = unavailable !== null;
  let loading: Promise<ModelRunner | null> | undefined;
  return {
    load() {
      if (loading !== undefined) return loading;
      const attempt: Promise<ModelRunner | null> = unavailable !== null ? Promise.resolve(null) : options.open();
      loading = attempt
        .catch((error: unknown) => {
          problem = options.problem(error instanceof Error ? error.message : String(error));
          console.warn(`${options.tag}: ${problem}; predicting with the roofline`);
          return null;
        })
        .finally(() => {
          settled = true;
          options.onSettled?.();
        });
      return loading;
    },
    get settled() {
      return settled;
    },
    get problem() {
      return problem;
    },
  };
}
