// Learned results kept in this browser per build of the engine, so that a repeat visit to a scenario
// shows its learned numbers at once, instead of after the core has compiled and ONNX Runtime has
// loaded (docs/UI.md, "Loading fast"). The engine is deterministic, so a stored result is the very
// result it would compute again for the same job; the build is named by the engine script's
// content-hashed URL, so a new build never reads an old build's results (and deletes them). Only on
// the served site (an http(s) engine script); the results stay in this browser like everything else
// the page computes.
//
// Why localStorage and not Cache Storage or IndexedDB: after a browser restart the page's first
// Cache Storage open answered 70–210 ms after it was asked (IndexedDB as late), while a 300 KB
// localStorage item was read in 2–6 ms (docs/PERFORMANCE.md, "The repeat visit"): on a repeat visit
// that wait was most of the time to the learned result. Its quota is small (about 5 MB per site in
// Chromium), so the store keeps a bounded number of characters, not only of scenarios.

import type { Job, JobResult } from './jobs.js';

/** localStorage keys of stored results start so; then the engine script's URL, a space and the job's hash. */
export const RESULT_KEY_PREFIX = 'prenet-result ';
/** The localStorage key of the store's index: the engine URL and its keys with their sizes, oldest first. */
export const RESULT_INDEX_KEY = 'prenet-results';
/** How many scenarios are kept: the most recently computed. */
export const STORED_RESULTS = 16;
/** How many characters (UTF-16 code units, keys included) all stored results may take together. */
export const STORED_CHARS = 2_000_000;
/** A result whose item is longer is not kept: it would push out most of the others. */
export const STORED_ITEM_CHARS = STORED_CHARS / 4;
/** Jobs whose text is longer (a large pasted config) are neither stored nor looked up. */
export const STORED_JOB_LIMIT = 256 * 1024;
/** The Cache Storage names an earlier build kept its results under: deleted at the first store. */
const LEGACY_CACHE_PREFIX = 'prenet-results ';

export interface ResultStore {
  /** The stored learned result of this job, or null. Never rejects. */
  get(job: Job): Promise<JobResult | null>;
  /** Keeps a learned result of this job, dropping the oldest beyond STORED_RESULTS or STORED_CHARS. Never rejects. */
  put(job: Job, result: JobResult): Promise<void>;
}

/** What one stored item holds: the job's text (compared in full, so a hash collision is never a wrong hit) and its result. */
interface StoredItem {
  job: string;
  result: unknown;
}

/** The index: whose results these are, and each key with its size in characters, oldest first. */
interface StoreIndex {
  engine: string;
  entries: [string, number][];
}

/** A 64-bit FNV-1a hash of a text as 16 hex digits (two 32-bit lanes): names a key, never trusted alone. */
export function textHash(text: string): string {
  let low = 0x811c9dc5;
  let high = 0x050c5d1f;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    low = Math.imul(low ^ code, 0x01000193) >>> 0;
    high = Math.imul(high ^ code, 0x01000193 ^ 0x5bd1e995) >>> 0;
  }
  return low.toString(16).padStart(8, '0') + high.toString(16).padStart(8, '0');
}

/** A successful result as the engine returns it (what get() accepts back from storage). */
function isStoredResult(value: unknown): value is JobResult {
  return typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === true && typeof (value as { response?: unknown }).response === 'object';
}

/** The index as stored, or an empty one of this engine when it is missing, unreadable or another build's. */
function readIndex(storage: Storage, engine: string): StoreIndex {
  try {
    const value = JSON.parse(storage.getItem(RESULT_INDEX_KEY) ?? 'null') as Partial<StoreIndex> | null;
    if (value?.engine === engine && Array.isArray(value.entries)) return { engine, entries: value.entries.filter((entry) => Array.isArray(entry) && typeof entry[0] === 'string' && typeof entry[1] === 'number') };
  } catch {
    // Unreadable: start again (the sweep removes what it listed).
  }
  return { engine, entries: [] };
}

/** Removes every stored result not listed in the index (another build's, or one a second tab lost track of). */
function sweep(storage: Storage, index: StoreIndex): void {
  const listed = new Set(index.entries.map(([key]) => key));
  const unlisted: string[] = [];
  for (let i = 0; i < storage.length; i += 1) {
    const key = storage.key(i);
    if (key !== null && key.startsWith(RESULT_KEY_PREFIX) && !listed.has(key)) unlisted.push(key);
  }
  for (const key of unlisted) storage.removeItem(key);
}

/** Drops the oldest entries until at most `count` are left and they fit `chars` with `extra` more. */
function evict(storage: Storage, index: StoreIndex, count: number, chars: number, extra: number): void {
  let total = index.entries.reduce((sum, [, size]) => sum + size, 0) + extra;
  while (index.entries.length > 0 && (index.entries.length > count || total > chars)) {
    const [key, size] = index.entries.shift() as [string, number];
    storage.removeItem(key);
    total -= size;
  }
}

/** Sets an item; false where the quota (shared with the rest of the site) refuses it. */
function setItem(storage: Storage, key: string, value: string): boolean {
  try {
    storage.setItem(key, value);
    return true;
  } catch {
    return false;
  }
}

/** The browser's localStorage, or null where it is refused (some privacy settings, sandboxed frames). */
function localStorageOrNull(): Storage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null;
  }
}

/**
 * The store of the engine whose script is at `engineUrl`, or null where there can be none (a blob:
 * or file: engine, no localStorage).
 */
export function openResultStore(engineUrl: string): ResultStore | null {
  let url: URL;
  try {
    url = new URL(engineUrl, location.href);
  } catch {
    return null;
  }
  const storage = localStorageOrNull();
  if (!/^https?:$/.test(url.protocol) || storage === null) return null;
  const engine = url.href;
  const keyOf = (text: string) => `${RESULT_KEY_PREFIX}${engine} ${textHash(text)}`;
  const textOf = (job: Job) => {
    const text = JSON.stringify(job);
    return text.length <= STORED_JOB_LIMIT ? text : null;
  };
  let swept = false;
  return {
    get(job) {
      try {
        const text = textOf(job);
        if (text === null) return Promise.resolve(null);
        const found = storage.getItem(keyOf(text));
        if (found === null) return Promise.resolve(null);
        const item = JSON.parse(found) as Partial<StoredItem>;
        return Promise.resolve(item.job === text && isStoredResult(item.result) ? item.result : null);
      } catch {
        return Promise.resolve(null);
      }
    },
    put(job, result) {
      try {
        const text = textOf(job);
        if (text === null || !result.ok) return Promise.resolve();
        const key = keyOf(text);
        const value = JSON.stringify({ job: text, result } satisfies StoredItem);
        const size = key.length + value.length;
        const index = readIndex(storage, engine);
        index.entries = index.entries.filter(([listed]) => listed !== key);
        if (!swept) {
          swept = true;
          sweep(storage, index);
          if (typeof caches !== 'undefined') void dropLegacyCaches();
        }
        storage.removeItem(key);
        if (size <= STORED_ITEM_CHARS) {
          evict(storage, index, STORED_RESULTS - 1, STORED_CHARS, size);
          if (setItem(storage, key, value)) index.entries.push([key, size]);
        }
        setItem(storage, RESULT_INDEX_KEY, JSON.stringify(index));
      } catch {
        // Storage full or refused: the next visit computes, as without a store.
      }
      return Promise.resolve();
    },
  };
}

/** Deletes the Cache Storage caches an earlier build kept its results in. */
async function dropLegacyCaches(): Promise<void> {
  try {
    const legacy = (await caches.keys()).filter((name) => name.startsWith(LEGACY_CACHE_PREFIX));
    await Promise.all(legacy.map((name) => caches.delete(name)));
  } catch {
    // Nothing to gain from reporting it.
  }
}
