// The page's side of the engine: starts the engine bundle (engine-worker.ts) as a Web Worker and,
// if no worker can start there, runs the same bundle as a classic <script> on the page's thread.
// Either way callers get the same promise-based API and can tell which one they got (`mode`).

import { HOST_KEY, type EngineHost, type HostReply, type HostRequest } from './engine-protocol';
import type { Job, JobResult, PlanJob, PlanResult } from './jobs.js';
import { openResultStore, type ResultStore } from './result-store';
import type { Catalog } from './types';

export type EngineMode = 'worker' | 'main';

export interface EngineClient {
  readonly mode: EngineMode;
  catalog(): Promise<Catalog>;
  compute(job: Job): Promise<JobResult>;
  /** The Plan panel's search, in the engine like predictions. */
  plan(job: PlanJob): Promise<PlanResult>;
  /** Why the learned predictors are not in use, as of the latest computation; null when they are. */
  learnedProblem(): string | null;
  /** Whether the latest computation was made on the roofline because the learned models were loading. */
  learnedPending(): boolean;
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
}

/** A request without its id; the client numbers them. */
type Ask = { kind: 'catalog' } | { kind: 'compute'; job: Job } | { kind: 'plan'; job: PlanJob } | { kind: 'learned' };

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

function clientOver(mode: EngineMode, send: (ask: Ask) => Promise<HostReply>, catalog: Catalog, store: ResultStore | null): EngineClient {
  let problem: string | null = null;
  let pending = false;
  /** Whether the engine has answered with the learned predictors yet; until then, stored results are asked first. */
  let learnedSeen = false;
  const keep = keeper(store);
  return {
    mode,
    catalog: () => Promise.resolve(catalog),
    async compute(job) {
      if (store !== null && !learnedSeen) {
        const stored = await store.get(job);
        if (stored !== null) {
          problem = null;
          pending = false;
          return stored;
        }
      }
      const reply = await send({ kind: 'compute', job });
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
    loadLearned: () =>
      send({ kind: 'learned' }).then(
        (reply) => (reply.ok && reply.kind === 'learned' ? reply.learnedProblem : reply.ok ? 'the engine answered something else' : reply.message),
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      ),
  };
}

/** Starts a worker and waits for its catalogue, proving the core loaded there. */
async function startWorker(url: string, kind: 'classic' | 'module', store: ResultStore | null): Promise<EngineClient> {
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
    const catalog = unwrapCatalog(await Promise.race([send({ kind: 'catalog' }), timeout]));
    return clientOver('worker', send, catalog, store);
  } catch (error) {
    worker.terminate();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the engine bundle as a classic script on this thread and takes the host it registers. */
async function startOnPage(url: string, kind: 'classic' | 'module', store: ResultStore | null): Promise<EngineClient> {
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
  return clientOver('main', send, unwrapCatalog(await send({ kind: 'catalog' })), store);
}

/**
 * @param onFallback told why the worker was given up, before the page-thread engine starts
 */
export async function connectEngine(source: EngineSource, onFallback?: (reason: string) => void): Promise<EngineClient> {
  const url = source.scriptUrl();
  const kind = source.kind ?? 'classic';
  // Opened now, so that its cache is open by the time the engine answers (result-store.ts).
  const store = openResultStore(url);
  if (typeof Worker === 'function') {
    try {
      return await startWorker(url, kind, store);
    } catch (error) {
      onFallback?.(error instanceof Error ? error.message : String(error));
    }
  } else {
    onFallback?.('this browser has no Web Workers');
  }
  return startOnPage(url, kind, store);
}
