// The engine host: the wasm core behind a message interface. Built as one classic script (an
// IIFE with the core inside; vite.config.ts sets worker.format) so that the very same file serves
//   - as the Web Worker (the usual case: computing never blocks typing or scrolling), and
//   - as a plain <script> on the page's thread when a worker cannot start (some file:// setups,
//     strict host policies); engine-client.ts then finds the host under HOST_KEY.
// One file for both keeps a single copy of the core and ONNX Runtime in the one-file build.

import createPrenetCore from '@wasm/prenet_core.mjs';
import { coreWasmResponse } from 'virtual:prenet-core-wasm';
import { learnedAssets, type LearnedAssets } from 'virtual:prenet-learned-assets';
import { createEngine } from './engine.js';
import { HOST_KEY, type EngineHost, type HostReply, type HostRequest } from './engine-protocol';
import { runJob, runPlan } from './jobs.js';
import { learnedLoader, loadOrtModels } from './learned-models';
import { receivePackedFiles } from './packed-files';
import type { PredictRequest, PrenetCoreModule } from './types';

/** ONNX Runtime and the class models, loaded once. A failure leaves predictions on the roofline. */
const learnedModels = learnedLoader({
  open: () => loadOrtModels(learnedAssets as LearnedAssets),
  problem: (reason) => `the learned models did not load (${reason})`,
  tag: 'prenet',
  unavailable: learnedAssets === null ? 'this build carries no learned models' : null,
});

/** Emscripten's hook for instantiating the module itself (receive: the instance and its module). */
type InstantiateWasm = (imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void) => object;

/**
 * The core's binary, compiled while it arrives: from its file or as it is unpacked. (Chromium's wasm
 * code cache applies only to streamed responses like this one, but it writes an entry only once
 * TurboFan has optimised enough of a module; checked: none was written for either module.) A server that does not say application/wasm gets the bytes compiled after the download.
 */
async function instantiateCore(response: Response, imports: WebAssembly.Imports): Promise<WebAssembly.WebAssemblyInstantiatedSource> {
  if (!response.ok) throw new Error(`the wasm core: HTTP ${response.status} for ${response.url}`);
  if ((response.headers.get('content-type') ?? '').startsWith('application/wasm')) return WebAssembly.instantiateStreaming(response, imports);
  return WebAssembly.instantiate(await response.arrayBuffer(), imports);
}

/** The wasm core: compiled from coreWasmResponse where the build has one, else it decodes itself. */
function loadCore(): Promise<PrenetCoreModule> {
  if (coreWasmResponse === null) return createPrenetCore();
  const binary = coreWasmResponse;
  let fail: (error: unknown) => void = () => undefined;
  // Emscripten 3.1.6 does not reject its ready promise when instantiateWasm fails later: this does.
  const failed = new Promise<never>((_, reject) => (fail = reject));
  const instantiateWasm: InstantiateWasm = (imports, receive) => {
    binary()
      .then((response) => instantiateCore(response, imports))
      .then((source) => receive(source.instance, source.module), fail);
    return {};
  };
  const factory = createPrenetCore as unknown as (options: { instantiateWasm: InstantiateWasm }) => Promise<PrenetCoreModule>;
  return Promise.race([factory({ instantiateWasm }), failed]);
}

// Imported statically, not lazily: a classic script cannot load further chunks, and the host has
// nothing to do before the core is there anyway. The core starts compiling now; the engine over it
// is made by the page's first request ('hello'), which brings the catalogue the page was built with,
// so that the engine answers from that copy while its core is still compiling (building it costs
// the core 0.2-0.3 s) and the catalogue is shipped once, in the page's bundle.
let firstCore: Promise<PrenetCoreModule> | undefined = loadCore();
const coreReady = firstCore.catch(() => undefined);
/** The first load is the one started above; a failed load is tried again by the engine's next call. */
function takeCore(): Promise<PrenetCoreModule> {
  const started = firstCore;
  firstCore = undefined;
  return started ?? loadCore();
}

// Loading starts now, before any request, so that ONNX Runtime and the class models are not loaded
// after the first result but while it is computed and drawn. On the site they start at once beside
// the core: their files download and compile off this thread. Where ONNX Runtime's wasm is unpacked
// from text on this thread (the one-file build), they start once the core is compiled: unpacking
// ONNX Runtime 1.30's 14 MB first delayed the core, and with it the first result, and did not bring the learned one
// earlier on a busy 2-core machine (docs/PERFORMANCE.md, Web). Failures are not lost: a computation
// retries the core and reports its error; the models' problem is in every reply.
if (learnedAssets?.wasmUrl === null) void coreReady.then(() => learnedModels.load());
else void learnedModels.load();

type Engine = ReturnType<typeof createEngine>;
let engine: Engine | undefined;

function engineFor(request: HostRequest): Engine {
  if (request.kind === 'hello') {
    if (request.packedFiles !== null) receivePackedFiles(request.packedFiles);
    engine ??= createEngine(takeCore, () => learnedModels.load(), { catalogText: request.catalogText });
  }
  if (engine === undefined) throw new Error(`the engine was asked for '${request.kind}' before its 'hello'`);
  return engine;
}

const host: EngineHost = {
  async handle(request: HostRequest): Promise<HostReply> {
    try {
      const engine = engineFor(request);
      if (request.kind === 'hello') return { id: request.id, ok: true, kind: 'hello' };
      if (request.kind === 'catalog') return { id: request.id, ok: true, kind: 'catalog', catalog: await engine.catalog() };
      if (request.kind === 'learned') {
        await learnedModels.load();
        return { id: request.id, ok: true, kind: 'learned', learnedProblem: learnedModels.problem };
      }
      if (request.kind === 'plan') return { id: request.id, ok: true, kind: 'plan', result: await runPlan(engine, request.job) };
      const pending = !learnedModels.settled;
      /** Until the learned models are there: the analytic roofline, and the reply says they are pending. */
      const roofline = { predict: (predict: PredictRequest) => engine.predictRoofline(predict), catalog: engine.catalog };
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
