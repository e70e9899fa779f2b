// The page's side of the engine: starts the engine bundle (engine-worker.ts) as a Web Worker and,
// if no worker can start there, runs the same bundle as a classic <script> on the page's thread.
// Either way callers get the same promise-based API and can tell which one they got (`mode`). The
// client is usable at once: stored results (result-store.ts) and the build's catalogue need no engine,
// and everything else waits for the engine to have started.

import { HOST_KEY, type EngineHost, type HostReply, type HostRequest } from './engine-protocol';
import type { Job, JobResult, PlanJob, PlanResult } from './jobs.js';
import { openResultStore, type ResultStore } from './result-store';
import type { PackedFiles } from './packed-files';
import type { Catalog } from './types';

export type EngineMode = 'worker' | 'main';

export interface EngineClient {
  /** Where the engine runs; null until it has started (or failed to start anywhere). */
  mode(): EngineMode | null;
  /** Resolves once the engine has started, with where; rejects when it could start nowhere. */
  readonly started: Promise<EngineMode>;
  catalog(): Promise<Catalog>;
  compute(job: Job): Promise<JobResult>;
  /** The Plan panel's search, in the engine like predictions. */
  plan(job: PlanJob): Promise<PlanResult>;
  /** Why the learned predictors are not in use, as of the latest computation; null when they are. */
  learnedProblem(): string | null;
  /** Whether the latest computation was made on the roofline because the learned models were loading. */
  learnedPending(): boolean;
  /** Whether the latest result came from the results kept by an earlier visit, not from the engine. */
  latestStored(): boolean;
  /** Loads the learned models; resolves when they are ready (null) or failed (why). Never rejects. */
  loadLearned(): Promise<string | null>;
}

/** Where the engine bundle is: a same-origin file (the site) or a blob: URL (the one-file build). */
export interface EngineSource {
  scriptUrl(): string;
  /**
   * 'classic' for every build; 'module' only under the Vite dev server, which serves the engine's
   * source as an ES module.
   */
  kind?: 'classic' | 'module';
  /** The one-file build's packed binaries, handed to the engine with its 'hello' (packed-files.ts). */
  packedFiles?(): PackedFiles;
}

/** The first request: what the engine needs from the page (engine-protocol.ts). */
type Hello = { kind: 'hello'; catalogText: string | null; packedFiles: PackedFiles | null };
/** A request without its id; the client numbers them. */
type Ask =
  | Hello
  | { kind: 'catalog' }
  | { kind: 'compute'; job: Job }
  | { kind: 'plan'; job: PlanJob }
  | { kind: 'learned' };

/** An engine that has started: where it runs and how to ask it. */
interface Transport {
  mode: EngineMode;
  send(ask: Ask): Promise<HostReply>;
}

/**
 * Long enough for a slow phone to compile the core in the worker; a worker that fails to start
 * normally says so at once with an `error` event, so this only guards against a silent hang.
 */
const WORKER_START_TIMEOUT_MS = 10_000;

function unwrapCatalog(reply: HostReply): Catalog {
  if (!reply.ok) throw new Error(`engine failed: ${reply.message}`);
  if (reply.kind !== 'catalog') throw new Error('engine answered a catalogue request with something else');
  return reply.catalog;
}

function unwrapHello(reply: HostReply): void {
  if (!reply.ok) throw new Error(`engine failed: ${reply.message}`);
  if (reply.kind !== 'hello') throw new Error('engine answered its start with something else');
}

function unwrapResult(reply: HostReply): JobResult {
  if (!reply.ok) throw new Error(`engine failed: ${reply.message}`);
  if (reply.kind !== 'compute') throw new Error('engine answered a computation with something else');
  return reply.result;
}

/**
 * Keeps the latest learned result in the store, once the current task (drawing it) is done: results
 * that arrive together, while typing, are kept as one, the last.
 */
function keeper(store: ResultStore | null): (job: Job, result: JobResult) => void {
  let queued: { job: Job; result: JobResult } | null = null;
  return (job, result) => {
    if (store === null) return;
    const idle = queued === null;
    queued = { job, result };
    if (!idle) return;
    setTimeout(() => {
      const latest = queued;
      queued = null;
      if (latest !== null) void store.put(latest.job, latest.result);
    }, 0);
  };
}

function clientOver(transport: Promise<Transport>, catalogText: string | null, store: ResultStore | null): EngineClient {
  let problem: string | null = null;
  let pending = false;
  let stored = false;
  let mode: EngineMode | null = null;
  const started = transport.then((t) => (mode = t.mode));
  started.catch(() => undefined); // reported by every request that needs the engine
  const send = (ask: Ask): Promise<HostReply> => transport.then((t) => t.send(ask));
  let catalog: Promise<Catalog> | undefined;
  /** Whether the engine has answered with the learned predictors yet; until then, stored results are asked first. */
  let learnedSeen = false;
  const keep = keeper(store);
  return {
    mode: () => mode,
    started,
    catalog: () => {
      // Parsed once; the engine's answer (dev server) is asked again after a failure.
      catalog ??= catalogText !== null ? Promise.resolve().then(() => JSON.parse(catalogText) as Catalog) : send({ kind: 'catalog' }).then(unwrapCatalog);
      catalog.catch(() => (catalog = undefined));
      return catalog;
    },
    async compute(job) {
      if (store !== null && !learnedSeen) {
        const kept = await store.get(job);
        if (kept !== null) {
          problem = null;
          pending = false;
          stored = true;
          return kept;
        }
      }
      const reply = await send({ kind: 'compute', job });
      stored = false;
      if (reply.ok && reply.kind === 'compute') {
        problem = reply.learnedProblem ?? null;
        pending = reply.learnedPending ?? false;
      }
      const result = unwrapResult(reply);
      if (result.ok && problem === null && !pending) {
        learnedSeen = true;
        keep(job, result);
      }
      return result;
    },
    plan: (job) =>
      send({ kind: 'plan', job }).then((reply) => {
        if (!reply.ok) throw new Error(`engine failed: ${reply.message}`);
        if (reply.kind !== 'plan') throw new Error('engine answered a plan with something else');
        return reply.result;
      }),
    learnedProblem: () => problem,
    learnedPending: () => pending,
    latestStored: () => stored,
    loadLearned: () =>
      send({ kind: 'learned' }).then(
        (reply) => (reply.ok && reply.kind === 'learned' ? reply.learnedProblem : reply.ok ? 'the engine answered something else' : reply.message),
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      ),
  };
}

/** Starts a worker and waits for its answer to 'hello', proving the engine script runs there. */
async function startWorker(url: string, kind: 'classic' | 'module', hello: Hello): Promise<Transport> {
  const worker = new Worker(url, { name: 'prenet-engine', type: kind });
  const pending = new Map<number, (reply: HostReply) => void>();
  let nextId = 1;
  let failure: Error | undefined;

  const failAll = (error: Error): void => {
    failure = error;
    for (const [id, resolve] of pending) resolve({ id, ok: false, message: error.message });
    pending.clear();
  };
  worker.addEventListener('message', (event: MessageEvent<HostReply>) => {
    const resolve = pending.get(event.data.id);
    pending.delete(event.data.id);
    resolve?.(event.data);
  });
  worker.addEventListener('error', (event) => {
    event.preventDefault();
    failAll(new Error(event.message || 'the engine worker could not start'));
  });

  const send = (ask: Ask): Promise<HostReply> => {
    if (failure) return Promise.reject(failure);
    const id = nextId++;
    return new Promise((resolve) => {
      pending.set(id, resolve);
      worker.postMessage({ ...ask, id } satisfies HostRequest);
    });
  };

  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the engine worker did not answer')), WORKER_START_TIMEOUT_MS);
  });
  try {
    unwrapHello(await Promise.race([send(hello), timeout]));
    return { mode: 'worker', send };
  } catch (error) {
    worker.terminate();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the engine bundle as a classic script on this thread and takes the host it registers. */
async function startOnPage(url: string, kind: 'classic' | 'module', hello: Hello): Promise<Transport> {
  const registry = globalThis as Record<symbol, unknown>;
  if (registry[HOST_KEY] === undefined) {
    await new Promise<void>((resolve, reject) => {
      const script = document.createElement('script');
      if (kind === 'module') script.type = 'module';
      script.src = url;
      script.addEventListener('load', () => resolve());
      script.addEventListener('error', () => reject(new Error('the engine script could not be loaded')));
      document.head.append(script);
    });
  }
  const host = registry[HOST_KEY] as EngineHost | undefined;
  if (host === undefined) throw new Error('the engine script loaded but registered no engine');
  let nextId = 1;
  const send = (ask: Ask): Promise<HostReply> => host.handle({ ...ask, id: nextId++ });
  unwrapHello(await send(hello));
  return { mode: 'main', send };
}

/** Starts the engine in a worker, or on this thread where no worker starts. */
async function startEngine(url: string, kind: 'classic' | 'module', hello: Hello, onFallback?: (reason: string) => void): Promise<Transport> {
  if (typeof Worker === 'function') {
    try {
      return await startWorker(url, kind, hello);
    } catch (error) {
      onFallback?.(error instanceof Error ? error.message : String(error));
    }
  } else {
    onFallback?.('this browser has no Web Workers');
  }
  return startOnPage(url, kind, hello);
}

/**
 * The engine's client, at once; the engine starts behind it.
 * @param catalogText the catalogue this page was built with (null under the dev server: the engine's is asked)
 * @param onFallback told why the worker was given up, before the page-thread engine starts
 */
export function connectEngine(source: EngineSource, catalogText: string | null, onFallback?: (reason: string) => void): EngineClient {
  const url = source.scriptUrl();
  // Opened now, so that its cache is open by the time the first result is asked for (result-store.ts).
  const store = openResultStore(url);
  const hello: Hello = { kind: 'hello', catalogText, packedFiles: source.packedFiles?.() ?? null };
  return clientOver(startEngine(url, source.kind ?? 'classic', hello, onFallback), catalogText, store);
}
