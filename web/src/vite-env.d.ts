// Module kinds that exist only through Vite (vite.config.ts); declared here because tsconfig loads
// Node's types, not vite/client's.

/** A worker entry built as its own file; the import is its URL. */
declare module '*?worker&url' {
  const url: string;
  export default url;
}

/** A stylesheet's text, for the custom element's shadow root. */
declare module '*.css?inline' {
  const css: string;
  export default css;
}

/** The engine bundle's code, made by vite.config.ts for the one-file build. */
declare module 'virtual:prenet-engine-code' {
  const code: string;
  export default code;
}

/** Replaced by vite.config.ts: which build this is ('site', 'single' or 'embed'). */
declare const __PRENET_BUILD__: 'site' | 'single' | 'embed';

/** Vite's build flags; only DEV is used (engine-source.ts). */
interface ImportMetaEnv {
  readonly DEV: boolean;
}

interface ImportMeta {
  readonly env: ImportMetaEnv;
}

/**
 * The learned predictors' bytes (vite.config.ts): ONNX Runtime's wasm and the class models the core
 * uses. Null where a build carries none (the dev server).
 */
declare module 'virtual:prenet-learned-assets' {
  export interface LearnedAssets {
    /** The model datasets, as the core names them (manifest.json classes with a non-empty `serves`). */
    readonly datasets: readonly string[];
    /** The URL the files are resolved against (the engine script's, else the page's); null when inlined. */
    readonly base: string | null;
    /** True when `base` is the URL of the script that carries this code (document.currentScript). */
    readonly fromScript: boolean;
    /**
     * ONNX Runtime's wasm as a URL (the site, embed.js), so that it is compiled while it streams in and
     * its compiled code can be cached; null when it is inlined (the one-file build): then `wasm()`.
     */
    readonly wasmUrl: string | null;
    wasm(): Promise<Uint8Array>;
    model(dataset: string): Promise<Uint8Array>;
  }
  export const learnedAssets: LearnedAssets | null;
}

/**
 * The wasm core's binary as a Response to compile while it arrives (vite.config.ts): fetched from its
 * own file (the site) or unpacked from the engine bundle (the one-file build); null where the core
 * module carries its binary itself (embed.js, the dev server).
 */
declare module 'virtual:prenet-core-wasm' {
  export const coreWasmResponse: (() => Promise<Response>) | null;
}

/**
 * The core's catalogue as JSON text, asked of the shipped core at build time (vite.config.ts), for
 * the page (which hands it to the engine); null under the dev server, where the engine asks the core.
 */
declare module 'virtual:prenet-catalog' {
  export const catalogText: string | null;
}
