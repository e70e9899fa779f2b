// Builds the calculator three ways, all into dist/ (docs/UI.md describes the outputs):
//
//   vite build                 the static site: index.html + hashed assets/ (page, engine worker)
//   vite build --mode embed    dist/embed.js: the <prenet-calculator> element, one classic script
//   vite build --mode single   dist/prenet-calculator.html: everything in one file, for file://
//
// `npm run build:web` runs all three, site first (it empties dist/). The wasm core
// (build/wasm/prenet_core.mjs, from `npm run build:wasm`) is imported through the `@wasm` alias;
// it is a single-file Emscripten build (binary embedded), so no .wasm file needs serving.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, defineConfig, type Plugin, type UserConfig } from 'vite';
import { viteSingleFile } from 'vite-plugin-singlefile';
import { CSP_META, singleFileCsp } from './web/csp.mjs';
import type { PrenetCoreFactory } from './web/src/types';

const fromRoot = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** The one-file build's name in dist/ (documented in README.md and docs/UI.md). */
export const SINGLE_FILE_NAME = 'prenet-calculator.html';

const alias = { '@wasm': fromRoot('build/wasm') };

/**
 * Classic scripts (the engine bundle, embed.js) cannot contain `import.meta`, which the Emscripten
 * module uses only to find a separate .wasm file. Ours is embedded, so the page's own address serves.
 */
function noImportMeta(): Plugin {
  return {
    name: 'prenet-no-import-meta',
    transform(code) {
      if (!code.includes('import.meta.url')) return null;
      return { code: code.replaceAll('import.meta.url', 'self.location.href'), map: null };
    },
  };
}

/**
 * Adds the Content-Security-Policy <meta> to the built site only: the dev server injects CSS as
 * inline <style> elements, which `style-src 'self'` would block.
 */
function siteCsp(): Plugin {
  return {
    name: 'prenet-csp-meta',
    apply: 'build',
    transformIndexHtml: () => [
      { tag: 'meta', attrs: { 'http-equiv': 'Content-Security-Policy', content: CSP_META }, injectTo: 'head-prepend' },
    ],
  };
}

/**
 * `virtual:prenet-engine-code`: the engine bundle (engine-worker.ts with the core) as one classic
 * script's text, built here with the same settings as the site's worker. The one-file page runs
 * this text from a blob: URL as its worker, or as a page script when no worker can start.
 */
function engineCode(): Plugin {
  const id = 'virtual:prenet-engine-code';
  let code = '';
  return {
    name: 'prenet-engine-code',
    async buildStart() {
      const output = await build({
        configFile: false,
        logLevel: 'warn',
        root: fromRoot('web'),
        resolve: { alias },
        plugins: [noImportMeta(), learnedAssets('inline'), coreWasm('packed')],
        build: {
          write: false,
          target: 'es2022',
          lib: { entry: fromRoot('web/src/engine-worker.ts'), formats: ['iife'], name: 'prenetEngine' },
        },
      });
      const first = (Array.isArray(output) ? output[0] : output) as { output: Array<{ type: string; code?: string }> };
      code = first.output.find((item) => item.type === 'chunk')?.code ?? '';
      if (code === '') throw new Error('the engine bundle came out empty');
    },
    resolveId: (source) => (source === id ? `\0${id}` : null),
    load: (source) => (source === `\0${id}` ? `export default ${JSON.stringify(code)};` : null),
  };
}

/** How a build carries the learned predictors (ONNX Runtime's wasm and the class models). */
type LearnedMode = 'files' | 'inline';

const ORT_WASM = fromRoot('node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm');
const MODELS = fromRoot('models/artifacts/');

/** The class models the core asks for: manifest.json classes with a non-empty `serves`. */
function servedModels(): Array<{ dataset: string; path: string }> {
  const manifest = JSON.parse(readFileSync(`${MODELS}manifest.json`, 'utf8')) as {
    classes: Array<{ dataset: string; file: string; serves?: string[] }>;
  };
  return manifest.classes.filter((c) => (c.serves ?? []).length > 0).map((c) => ({ dataset: c.dataset, path: `${MODELS}${c.file}` }));
}

/** Content-hashed names in assets/, beside the engine script (same scheme as Vite's). */
function hashedName(path: string, bytes: Buffer): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  const hash = createHash('sha256').update(bytes).digest('base64url').slice(0, 8);
  return `${name.slice(0, dot)}-${hash}${name.slice(dot)}`;
}

/**
 * `virtual:prenet-learned-assets` for the engine bundle.
 *   files   (the site, embed.js) the bytes are fetched, when first asked for, from hashed files in
 *           assets/ resolved against the engine script's own URL (document.currentScript at
 *           evaluation; self.location in a worker); `emit` writes those files (the page's and
 *           embed's builds do, the worker's build only names them); `from` is the path from
 *           the script's folder to assets/ ('' for the worker, which lives in assets/)
 *   inline  (the one-file build) each file is carried once by the page, gzip + base64 (packedFiles),
 *           handed to the engine (web/src/packed-files.ts) and unpacked with DecompressionStream:
 *           ORT's 12 MB of wasm become about 4.2 MB of text
 * The dev server gets no learned models (null): the roofline.
 */
function learnedAssets(mode: LearnedMode, emit = false, from = ''): Plugin {
  const id = 'virtual:prenet-learned-assets';
  const files = () => [{ dataset: '', path: ORT_WASM }, ...servedModels()].map((f) => ({ ...f, bytes: readFileSync(f.path) }));
  return {
    name: 'prenet-learned-assets',
    resolveId: (source) => (source === id ? `\0${id}` : null),
    load(source) {
      if (source !== `\0${id}`) return null;
      if (this.meta.watchMode) return 'export const learnedAssets = null;';
      const all = files();
      const datasets = JSON.stringify(all.slice(1).map((f) => f.dataset));
      if (mode === 'files') {
        const names = Object.fromEntries(all.map((f) => [f.dataset, `${from}${hashedName(f.path, f.bytes)}`]));
        return `
const script = (typeof document !== 'undefined' && document.currentScript instanceof HTMLScriptElement && document.currentScript.src) || '';
const base = script || self.location.href;
const names = ${JSON.stringify(names)};
async function get(name) {
  const response = await fetch(new URL(name, base));
  if (!response.ok) throw new Error(name + ': HTTP ' + response.status);
  return new Uint8Array(await response.arrayBuffer());
}
export const learnedAssets = { datasets: ${datasets}, base, fromScript: script !== '', wasmUrl: new URL(names[''], base).href, wasm: () => get(names['']), model: (d) => get(names[d]) };
`;
      }
      return `
import { packedFile } from ${JSON.stringify(PACKED_FILES_MODULE)};
function decoded(text) {
  // The browser decodes a data: URL natively and without blocking this thread (the policy allows
  // connect-src data:); atob and a copy loop take the thread for a while on 5 MB, so only a fallback.
  return fetch('data:application/gzip;base64,' + text).then((response) => response.blob(), () => {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
    return new Blob([bytes]);
  });
}
async function unpack(text) {
  const stream = (await decoded(text)).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
export const learnedAssets = { datasets: ${datasets}, base: null, fromScript: false, wasmUrl: null, wasm: () => packedFile('ort').then(unpack), model: (d) => packedFile('model:' + d).then(unpack) };
`;
    },
    generateBundle() {
      if (!emit) return;
      for (const f of files()) this.emitFile({ type: 'asset', fileName: `assets/${hashedName(f.path, f.bytes)}`, source: f.bytes });
    },
  };
}

const CORE_MJS = fromRoot('build/wasm/prenet_core.mjs');
/** Where Emscripten 3.1.6's -sSINGLE_FILE output keeps its binary: one data: URI string. */
const CORE_DATA_URI = /(wasmBinaryFile\s*=\s*)"data:application\/octet-stream;base64,([A-Za-z0-9+/=]+)"/;

/** The core's wasm bytes, decoded from the data: URI inside build/wasm/prenet_core.mjs. */
function coreWasmBytes(code = readFileSync(CORE_MJS, 'utf8')): Buffer {
  const match = CORE_DATA_URI.exec(code);
  if (match?.[2] === undefined) throw new Error(`${CORE_MJS}: no embedded wasm data: URI (was it built without -sSINGLE_FILE=1?)`);
  return Buffer.from(match[2], 'base64');
}

/**
 * `virtual:prenet-core-wasm` for the engine bundle, and what the core's module looks like in it.
 *   file      (the site) prenet_core.mjs loses its base64 copy of the binary, which is written once
 *             as a hashed assets/prenet_core-[hash].wasm (by the page's build, `emit`); the engine
 *             instantiates it from its URL with WebAssembly.instantiateStreaming (engine-worker.ts), so
 *             it compiles while it downloads and Chromium can keep the compiled code (code cache). Gzipped, base64 costs about 40% more than
 *             the binary it encodes (docs/PERFORMANCE.md, "Sizes").
 *   packed    (the one-file build's engine) the binary gzip + base64, carried by the page (packedFiles;
 *             a third of the data: URI Emscripten writes), unpacked by a data: URL fetch and DecompressionStream
 *             and compiled while it unpacks (instantiateStreaming on the unpacked stream)
 *   embedded  (embed.js, dev server) prenet_core.mjs as built: it decodes itself
 */
function coreWasm(mode: 'file' | 'packed' | 'embedded', emit = false): Plugin {
  const id = 'virtual:prenet-core-wasm';
  const name = () => hashedName('prenet_core.wasm', coreWasmBytes());
  let active = false;
  return {
    name: 'prenet-core-wasm',
    buildStart() {
      active = mode !== 'embedded' && !this.meta.watchMode;
    },
    resolveId: (source) => (source === id ? `\0${id}` : null),
    load(source) {
      if (source !== `\0${id}`) return null;
      if (!active) return 'export const coreWasmResponse = null;';
      if (mode === 'packed') {
        return `
import { packedFile } from ${JSON.stringify(PACKED_FILES_MODULE)};
export async function coreWasmResponse() {
  const gzipped = await fetch('data:application/gzip;base64,' + (await packedFile('core')));
  return new Response(gzipped.body.pipeThrough(new DecompressionStream('gzip')), { headers: { 'Content-Type': 'application/wasm' } });
}
`;
      }
      return `
const base = (typeof document !== 'undefined' && document.currentScript instanceof HTMLScriptElement && document.currentScript.src) || self.location.href;
const url = new URL(${JSON.stringify(name())}, base).href;
export function coreWasmResponse() {
  return fetch(url, { credentials: 'same-origin' });
}
`;
    },
    transform(code, source) {
      if (!active || source.split('?')[0] !== CORE_MJS) return null;
      coreWasmBytes(code); // fails loudly if this Emscripten output keeps its binary elsewhere
      // Any non-data: name: with instantiateWasm given, Emscripten never fetches it.
      return { code: code.replace(CORE_DATA_URI, '$1"prenet_core.wasm"'), map: null };
    },
    generateBundle() {
      if (emit && active && mode === 'file') this.emitFile({ type: 'asset', fileName: `assets/${name()}`, source: coreWasmBytes() });
    },
  };
}

/** The catalogue text of build/wasm's core, computed once per build process (see coreCatalog). */
let catalogText: Promise<string> | undefined;

/** Runs the core in Node, as the CLI does (its binary passed as bytes), and asks it for its catalogue. */
async function catalogOfCore(): Promise<string> {
  const factory = ((await import(pathToFileURL(CORE_MJS).href)) as { default: PrenetCoreFactory }).default;
  const text = (await factory({ wasmBinary: coreWasmBytes() })).catalog();
  const parsed = JSON.parse(text) as { error?: unknown; hardware?: unknown };
  if (parsed.error !== undefined || !Array.isArray(parsed.hardware)) throw new Error(`the core's catalogue is not one: ${text.slice(0, 200)}`);
  return text;
}

/**
 * `virtual:prenet-catalog` for the page: the core's catalogue (hardware, presets, options), asked of
 * the very core this build ships and embedded as text. The catalogue is fixed for a build: the page
 * lays out its form from it without waiting for the engine, and hands it to the engine ('hello',
 * engine-protocol.ts), which answers from it while its core is still compiling (building it costs the
 * core 0.2-0.3 s). The dev server gets null: the engine asks its core.
 */
function coreCatalog(): Plugin {
  const id = 'virtual:prenet-catalog';
  return {
    name: 'prenet-catalog',
    resolveId: (source) => (source === id ? `\0${id}` : null),
    async load(source) {
      if (source !== `\0${id}`) return null;
      if (this.meta.watchMode) return 'export const catalogText = null;';
      catalogText ??= catalogOfCore();
      return `export const catalogText = ${JSON.stringify(await catalogText)};`;
    },
  };
}

/** The service worker's source; `'__PRENET_SW_BUILD__'` in it becomes this build's version and files. */
const SERVICE_WORKER = fromRoot('web/src/service-worker.js');
const SW_PLACEHOLDER = "'__PRENET_SW_BUILD__'";

/**
 * dist/sw.js for the served site (web/src/service-worker.js): the list of this build's files
 * (index.html and everything under assets/, read from the finished bundle, so nothing is listed by
 * hand) and a version that is a hash of their contents, so any change of any file makes a new cache
 * and the old one is deleted when the new worker activates.
 */
function serviceWorker(): Plugin {
  return {
    name: 'prenet-service-worker',
    apply: 'build',
    generateBundle: {
      order: 'post',
      handler(_options, bundle) {
        const files = Object.keys(bundle).filter((name) => !name.endsWith('.map')).sort();
        if (!files.includes('index.html')) throw new Error('service worker: index.html missing from the bundle');
        const hash = createHash('sha256');
        for (const name of files) {
          const item = bundle[name];
          hash.update(name).update(item === undefined ? '' : item.type === 'chunk' ? item.code : item.source);
        }
        const build = { version: hash.digest('base64url').slice(0, 12), page: 'index.html', files };
        const source = readFileSync(SERVICE_WORKER, 'utf8');
        if (!source.includes(SW_PLACEHOLDER)) throw new Error(`service worker: ${SW_PLACEHOLDER} missing from ${SERVICE_WORKER}`);
        this.emitFile({ type: 'asset', fileName: 'sw.js', source: source.replace(SW_PLACEHOLDER, JSON.stringify(build)) });
      },
    },
  };
}

/** sha256 CSP sources for every inline <script> and <style> of a page. */
function inlineHashes(html: string, tag: 'script' | 'style'): string[] {
  const hashes = new Set<string>();
  for (const match of html.matchAll(new RegExp(`<${tag}\\b[^>]*>([\\s\\S]*?)</${tag}>`, 'g'))) {
    hashes.add(`'sha256-${createHash('sha256').update(match[1] ?? '').digest('base64')}'`);
  }
  return [...hashes];
}

/** Where the engine bundle's packed-mode modules take the one-file build's binaries from. */
const PACKED_FILES_MODULE = fromRoot('web/src/packed-files.ts');

/**
 * The one-file build's binaries as web/src/packed-files.ts names them (`core`, `ort`, `model:<dataset>`),
 * each gzip -9 + base64: the texts the page carries in its data blocks.
 */
function packedFiles(): Record<string, string> {
  const pack = (bytes: Buffer) => gzipSync(bytes, { level: 9 }).toString('base64');
  const files: Record<string, string> = { core: pack(coreWasmBytes()), ort: pack(readFileSync(ORT_WASM)) };
  for (const model of servedModels()) files[`model:${model.dataset}`] = pack(readFileSync(model.path));
  return files;
}

/** The page's data blocks: not scripts (no JS parser reads them, and the CSP does not apply); base64 never holds `<`. */
function packedBlocks(files: Record<string, string>): string {
  return Object.entries(files)
    .map(([name, text]) => `<script type="application/octet-stream" data-prenet-file="${name}">${text}</script>`)
    .join('\n');
}

/**
 * After vite-plugin-singlefile has inlined everything: writes a CSP that allows exactly the inlined
 * code (by hash), adds the packed binaries' data blocks, and gives the page its documented name.
 */
function singleFileFinish(): Plugin {
  return {
    name: 'prenet-single-file-finish',
    enforce: 'post',
    generateBundle: {
      order: 'post',
      handler(_options, bundle) {
        const page = bundle['index.html'];
        if (page === undefined || page.type !== 'asset') throw new Error('single-file build: index.html missing from the bundle');
        const html = String(page.source);
        const csp = singleFileCsp({ scripts: inlineHashes(html, 'script'), styles: inlineHashes(html, 'style') });
        const meta = `<meta http-equiv="Content-Security-Policy" content="${csp}" />`;
        const charset = '<meta charset="utf-8" />';
        if (!html.includes(charset)) throw new Error('single-file build: expected <meta charset> to place the CSP after');
        const bodyEnd = html.lastIndexOf('</body>');
        if (bodyEnd < 0) throw new Error('single-file build: expected </body> to place the packed files before');
        delete bundle['index.html'];
        const withBlocks = `${html.slice(0, bodyEnd)}${packedBlocks(packedFiles())}\n${html.slice(bodyEnd)}`;
        const finished = withBlocks.replace(charset, `${charset}\n    ${meta}`);
        this.emitFile({ type: 'asset', fileName: SINGLE_FILE_NAME, source: finished });
      },
    },
  };
}

const shared = {
  root: fromRoot('web'),
  base: './', // relative asset URLs, so dist/ works from any path
  resolve: { alias },
} satisfies UserConfig;

function siteConfig(): UserConfig {
  return {
    ...shared,
    publicDir: fromRoot('public'),
    define: { __PRENET_BUILD__: JSON.stringify('site') },
    // The engine worker is a classic script with the core inside: the same file then also serves
    // as the page-thread fallback (engine-client.ts), and classic workers start everywhere.
    worker: { format: 'iife', plugins: () => [noImportMeta(), learnedAssets('files'), coreWasm('file')] },
    build: {
      outDir: fromRoot('dist'),
      emptyOutDir: true,
      target: 'es2022',
      // The worker chunk carries the core (binary embedded as base64) and ONNX Runtime's JS; its
      // size is expected. ORT's wasm and the models are separate hashed files (learnedAssets).
      chunkSizeWarningLimit: 2048,
    },
    plugins: [siteCsp(), learnedAssets('files', true), coreWasm('file', true), serviceWorker(), coreCatalog()],
  };
}

function embedConfig(): UserConfig {
  return {
    ...shared,
    publicDir: false,
    define: { __PRENET_BUILD__: JSON.stringify('embed') },
    // ORT's wasm and the class models: the same hashed files as the site's (same bytes, same
    // names), fetched by the first element that predicts (embed.ts).
    plugins: [noImportMeta(), learnedAssets('files', true, 'assets/')],
    build: {
      outDir: fromRoot('dist'),
      emptyOutDir: false,
      target: 'es2022',
      chunkSizeWarningLimit: 2048,
      // A classic script, not a module: it then works from any origin without CORS and from file://.
      lib: { entry: fromRoot('web/src/embed.ts'), formats: ['iife'], name: 'PrenetCalculator', fileName: () => 'embed.js' },
      rolldownOptions: { output: { codeSplitting: false } },
    },
  };
}

function singleConfig(): UserConfig {
  return {
    ...shared,
    publicDir: false,
    define: { __PRENET_BUILD__: JSON.stringify('single') },
    resolve: {
      alias: [
        { find: '@wasm', replacement: alias['@wasm'] },
        // The engine bundle comes inlined instead of as a file beside the page.
        { find: /^\.\/engine-source$/, replacement: fromRoot('web/src/engine-source.single.ts') },
      ],
    },
    build: {
      outDir: fromRoot('dist'),
      emptyOutDir: false,
      target: 'es2022',
    },
    plugins: [engineCode(), coreCatalog(), viteSingleFile({ removeViteModuleLoader: true }), singleFileFinish()],
  };
}

export default defineConfig(({ mode }) => {
  if (mode === 'embed') return embedConfig();
  if (mode === 'single') return singleConfig();
  return siteConfig();
});
