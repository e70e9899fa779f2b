// The one-file build's binaries on the engine's side: the wasm core, ONNX Runtime's wasm and the class
// models, each gzip + base64, arrive with the page's 'hello' (engine-protocol.ts). The page carries them
// in non-script data blocks (vite.config.ts, singleFileFinish), not as string literals in the engine's
// script: a JS parser then never scans their 5.5 MB, on the page or in the worker (docs/PERFORMANCE.md).
// The site's engine fetches files instead and never asks for these.

/** A packed file's text by its name: `core`, `ort`, or `model:` and a class model's dataset. */
export type PackedFiles = Record<string, string>;

let deliver: (files: PackedFiles) => void = () => undefined;
const delivered = new Promise<PackedFiles>((resolve) => (deliver = resolve));

/** Hands over the page's packed files; the first call counts. */
export function receivePackedFiles(files: PackedFiles): void {
  deliver(files);
}

/** A packed file's text, once the page has handed them over; rejects naming a file the page lacks. */
export async function packedFile(name: string): Promise<string> {
  const text = (await delivered)[name];
  if (typeof text !== 'string') throw new Error(`the page carries no packed file '${name}'`);
  return text;
}
