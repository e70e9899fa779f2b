// The engine bundle for the static site: Vite builds engine-worker.ts as its own hashed file
// (classic script, see vite.config.ts) and gives its URL, which serves both the worker and the
// page-thread fallback, so a browser that falls back fetches nothing new.
// The one-file build swaps this module for engine-source.single.ts (vite.config.ts).

import workerUrl from './engine-worker.ts?worker&url';
import type { EngineSource } from './engine-client';

export const engineSource: EngineSource = {
  scriptUrl: () => workerUrl,
  // The dev server (`npx vite`) serves the worker's source unbundled, as an ES module.
  kind: import.meta.env.DEV ? 'module' : 'classic',
};
