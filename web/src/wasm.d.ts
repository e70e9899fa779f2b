// The Emscripten ES-module factory, imported by the page through Vite's `@wasm` alias
// (vite.config.ts → build/wasm/). Declared here because the generated file has no types.
declare module '@wasm/prenet_core.mjs' {
  const createPrenetCore: import('./types').PrenetCoreFactory;
  export default createPrenetCore;
}
