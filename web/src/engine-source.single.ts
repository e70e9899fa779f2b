// The engine bundle for the one-file build: its text is inlined into the page (the virtual module
// is made by vite.config.ts from the same engine-worker.ts) and run from a blob: URL, as a worker
// or, failing that, as a page script. A blob: worker is used because file:// pages cannot start a
// worker from a file, and a *classic* one because Chromium refuses blob: module workers there.
// The binaries it needs (the core, ONNX Runtime's wasm, the class models) are the page's data blocks,
// handed over with the engine's 'hello' (packed-files.ts).

import engineCode from 'virtual:prenet-engine-code';
import type { EngineSource } from './engine-client';
import type { PackedFiles } from './packed-files';

let url: string | undefined;

/** The page's `<script type="application/octet-stream" data-prenet-file>` blocks, by name. */
function readPackedFiles(): PackedFiles {
  const files: PackedFiles = {};
  for (const block of document.querySelectorAll<HTMLScriptElement>('script[type="application/octet-stream"][data-prenet-file]')) {
    files[block.dataset.prenetFile ?? ''] = block.text;
  }
  return files;
}

export const engineSource: EngineSource = {
  scriptUrl: () => (url ??= URL.createObjectURL(new Blob([engineCode], { type: 'text/javascript' }))),
  packedFiles: readPackedFiles,
};
