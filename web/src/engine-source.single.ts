// The engine bundle for the one-file build: its text is inlined into the page (the virtual module
// is made by vite.config.ts from the same engine-worker.ts) and run from a blob: URL, as a worker
// or, failing that, as a page script. A blob: worker is used because file:// pages cannot start a
// worker from a file, and a *classic* one because Chromium refuses blob: module workers there.

import engineCode from 'virtual:prenet-engine-code';
import type { EngineSource } from './engine-client';

let url: string | undefined;

export const engineSource: EngineSource = {
  scriptUrl: () => (url ??= URL.createObjectURL(new Blob([engineCode], { type: 'text/javascript' }))),
};
