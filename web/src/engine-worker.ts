// The engine host: the wasm core behind a message interface. Built as one classic script (an
// IIFE with the core inside; vite.config.ts sets worker.format) so that the very same file serves
//   - as the Web Worker (the usual case: computing never blocks typing or scrolling), and
//   - as a plain <script> on the page's thread when a worker cannot start (some file:// setups,
//     strict host policies); engine-client.ts then finds the host under HOST_KEY.
// One file for both keeps a single copy of the core (and later ONNX Runtime) in the one-file build.

import createPrenetCore from '@wasm/prenet_core.mjs';
import { coreWasm } from 'virtual:prenet-core-wasm';
import { learnedAssets, type LearnedAssets } from 'virtual:prenet-learned-assets';
import { createEngine } from './engine.js';
import { HOST_KEY, type EngineHost, type HostReply, type HostRequest } from './engine-protocol';
import { runJob, runPlan } from './jobs.js';
import { learnedLoader, loadOrtModels } from './learned-models';
import type { PredictRequest } from './types';

/**
 * ONNX Runtime and the class models, loaded once, when the page asks (after its first result, so the
 * first paint does not wait for ORT's 14 MB wasm). A failure leaves predictions on the roofline.
 */
const learnedModels = learnedLoader({
  open: () => loadOrtModels(learnedAssets as LearnedAssets),
  problem: (reason) => `the learned models did not load (${reason})`,
  tag: 'prenet',
  unavailable: learnedAssets === null ? 'this build carries no learned models' : null,
});

// Imported statically, not lazily: a classic script cannot load further chunks, and the host has
// nothing to do before the core is there anyway.
// The site fetches the core's binary as its own file (coreWasm); other builds carry it inside the core.
const engine = createEngine(async () => createPrenetCore(coreWasm === null ? {} : { wasmBinary: await coreWasm() }), () => learnedModels.load());
/** Until the learned models are there: the analytic roofline, and the reply says they are pending. */
const roofline = { predict: (request: PredictRequest) => engine.predictRoofline(request), catalog: engine.catalog };

const host: EngineHost = {
  async handle(request: HostRequest): Promise<HostReply> {
    try {
      if (request.kind === 'catalog') return { id: request.id, ok: true, kind: 'catalog', catalog: await engine.catalog() };
      if (request.kind === 'learned') {
        await learnedModels.load();
        return { id: request.id, ok: true, kind: 'learned', learnedProblem: learnedModels.problem };
      }
      if (request.kind === 'plan') return { id: request.id, ok: true, kind: 'plan', result: await runPlan(engine, request.job) };
      const pending = !learnedModels.settled;
      const result = await runJob(pending ? roofline : engine, request.job);
      return { id: request.id, ok: true, kind: 'compute', result, learnedProblem: learnedModels.problem, learnedPending: pending };
    } catch (error) {
      return { id: request.id, ok: false, message: error instanceof Error ? error.message : String(error) };
    }
  },
};

// `WorkerGlobalScope` exists only inside workers; on the page this script just registers the host.
declare const WorkerGlobalScope: { new (): unknown } | undefined;
const inWorker = typeof WorkerGlobalScope !== 'undefined' && self instanceof WorkerGlobalScope;

if (inWorker) {
  self.addEventListener('message', (event: MessageEvent<HostRequest>) => {
    void host.handle(event.data).then((reply) => self.postMessage(reply));
  });
} else {
  (globalThis as Record<symbol, unknown>)[HOST_KEY] = host;
}
