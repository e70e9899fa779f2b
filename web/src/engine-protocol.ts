// Messages between the page and the engine host (engine-worker.ts). The host answers each request
// with a reply carrying the same id; `ok: false` means the engine itself failed (a bad request is
// not a failure: it is a JobResult with ok: false). `learnedProblem` says why a result came from the
// roofline rather than the learned predictors (null when they are in use); `learnedPending` that they
// were still loading. A 'learned' request loads them (the page sends it after its first result) and
// is answered once they are ready or have failed. A 'plan' request runs the Plan panel's search.
// 'hello' is the first request and is answered at once: it hands the host the catalogue the page
// was built with (null under the dev server, where the host asks its core) and, in the one-file
// build, the packed binaries (packed-files.ts; null elsewhere), and its answer proves the host started. 'catalog' asks the host for its core's catalogue (only where the page has none).

import type { Job, JobResult, PlanJob, PlanResult } from './jobs.js';
import type { PackedFiles } from './packed-files';
import type { Catalog } from './types';

export type HostRequest =
  | { id: number; kind: 'hello'; catalogText: string | null; packedFiles: PackedFiles | null }
  | { id: number; kind: 'catalog' }
  | { id: number; kind: 'compute'; job: Job }
  | { id: number; kind: 'plan'; job: PlanJob }
  | { id: number; kind: 'learned' };

export type HostReply =
  | { id: number; ok: true; kind: 'hello' }
  | { id: number; ok: true; kind: 'catalog'; catalog: Catalog }
  | { id: number; ok: true; kind: 'compute'; result: JobResult; learnedProblem?: string | null; learnedPending?: boolean }
  | { id: number; ok: true; kind: 'plan'; result: PlanResult }
  | { id: number; ok: true; kind: 'learned'; learnedProblem: string | null }
  | { id: number; ok: false; message: string };

/** What engine-worker.ts provides: the worker's message handler, callable directly too. */
export interface EngineHost {
  handle(request: HostRequest): Promise<HostReply>;
}

/**
 * Where the engine bundle, run as a classic script on the page's thread, leaves its host for
 * engine-client.ts to pick up. A registered symbol, so no page global can collide with it.
 */
export const HOST_KEY = Symbol.for('prenet.engine-host');
