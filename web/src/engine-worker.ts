// The engine host: the wasm core behind a message interface. Built as one classic script (an
// IIFE with the core inside; vite.config.ts sets worker.format) so that the very same file serves
//   - as the Web Worker (the usual case: computing never blocks typing or scrolling), and
//   - as a plain <script> on the page's thread when a worker cannot start (some file:// setups,
//     strict host policies); engine-client.ts then finds the host under HOST_KEY.
// One file for both keeps a single copy of the core (and later ONNX Runtime) in the one-file build.

import createPrenetCore from '@wasm/prenet_core.mjs';
import { createEngine } from './engine.js';
import { HOST_KEY, type EngineHost, type HostReply, type HostRequest } from './engine-protocol';
import { runJob } from './jobs.js';

// Imported statically, not lazily: a classic script cannot load further chunks, and the host has
// nothing to do before the core is there anyway.
const engine = createEngine(() => createPrenetCore());

const host: EngineHost = {
  async handle(request: HostRequest): Promise<HostReply> {
    try {
      if (request.kind === 'catalog') return { id: request.id, ok: true, kind: 'catalog', catalog: await engine.catalog() };
      return { id: request.id, ok: true, kind: 'compute', result: await runJob(engine, request.job) };
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
