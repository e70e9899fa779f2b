// Learned results kept in this browser per build of the engine, so that a repeat visit to a scenario
// shows its learned numbers at once, instead of after the core has compiled and ONNX Runtime has
// loaded (docs/UI.md, "Loading fast"). The engine is deterministic, so a stored result is the very
// result it would compute again for the same job; the build is named by the engine script's
// content-hashed URL, so a new build never reads an old build's results (and deletes them). Only on
// the served site (an http(s) engine script, Cache Storage and SubtleCrypto present); the results
// stay in this browser like everything else the page computes.

import type { Job, JobResult } from './jobs.js';

/** Cache Storage names of this store: the prefix, then the engine script's URL. */
export const RESULT_CACHE_PREFIX = 'prenet-results ';
/** How many scenarios are kept: the most recently computed. */
export const STORED_RESULTS = 16;
/** Jobs whose text is longer (a large pasted config) are neither stored nor looked up: hashing them would cost more than it saves. */
export const STORED_JOB_LIMIT = 256 * 1024;

export interface ResultStore {
  /** The stored learned result of this job, or null. Never rejects. */
  get(job: Job): Promise<JobResult | null>;
  /** Keeps a learned result of this job, dropping the oldest beyond STORED_RESULTS. Never rejects. */
  put(job: Job, result: JobResult): Promise<void>;
}

/** The cache key of a job's text: a same-origin URL (Cache Storage keys are requests) naming its SHA-256. */
async function keyOf(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  const hex = Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return new URL(`/prenet-results/${hex}`, location.origin).href;
}

/** A successful result as the engine returns it (what get() accepts back from storage). */
function isStoredResult(value: unknown): value is JobResult {
  return typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === true && typeof (value as { response?: unknown }).response === 'object';
}

/**
 * The store of the engine whose script is at `engineUrl`, or null where there can be none (a blob:
 * or file: engine, no Cache Storage, no SubtleCrypto). Opens its cache at once, so that the first
 * lookup does not wait for it.
 */
export function openResultStore(engineUrl: string): ResultStore | null {
  let url: URL;
  try {
    url = new URL(engineUrl, location.href);
  } catch {
    return null;
  }
  if (!/^https?:$/.test(url.protocol) || typeof caches === 'undefined' || globalThis.crypto?.subtle === undefined) return null;
  const name = RESULT_CACHE_PREFIX + url.href;
  const opened = caches.open(name);
  opened.catch(() => undefined);
  let swept = false;
  const textOf = (job: Job) => {
    const text = JSON.stringify(job);
    return text.length <= STORED_JOB_LIMIT ? text : null;
  };
  return {
    async get(job) {
      try {
        const text = textOf(job);
        if (text === null) return null;
        const found = await (await opened).match(await keyOf(text));
        if (found === undefined) return null;
        const value: unknown = await found.json();
        return isStoredResult(value) ? value : null;
      } catch {
        return null;
      }
    },
    async put(job, result) {
      try {
        const text = textOf(job);
        if (text === null || !result.ok) return;
        const cache = await opened;
        await cache.put(await keyOf(text), new Response(JSON.stringify(result), { headers: { 'content-type': 'application/json' } }));
        // Keys come back in the order they were put (a put replaces and appends): oldest first.
        const keys = await cache.keys();
        await Promise.all(keys.slice(0, Math.max(0, keys.length - STORED_RESULTS)).map((key) => cache.delete(key)));
        if (!swept) {
          swept = true;
          const stale = (await caches.keys()).filter((other) => other.startsWith(RESULT_CACHE_PREFIX) && other !== name);
          await Promise.all(stale.map((other) => caches.delete(other)));
        }
      } catch {
        // Storage full or unavailable: the next visit computes, as without a store.
      }
    },
  };
}
