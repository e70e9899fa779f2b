// Builds the page: web/ → dist/. The wasm core (build/wasm/prenet_core.mjs, made by
// `npm run build:wasm`) is imported through the `@wasm` alias and bundled as its own chunk.
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import { CSP_META } from './web/csp.mjs';

const fromRoot = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * Adds the Content-Security-Policy <meta> to the built page only: the dev server injects CSS as
 * inline <style> elements, which `style-src 'self'` would block.
 */
function contentSecurityPolicy(): Plugin {
  return {
    name: 'prenet-csp-meta',
    apply: 'build',
    transformIndexHtml: () => [
      {
        tag: 'meta',
        attrs: { 'http-equiv': 'Content-Security-Policy', content: CSP_META },
        injectTo: 'head-prepend',
      },
    ],
  };
}

export default defineConfig({
  root: fromRoot('web'),
  publicDir: fromRoot('public'),
  base: './', // relative asset URLs, so dist/ works from any path
  resolve: { alias: { '@wasm': fromRoot('build/wasm') } },
  build: {
    outDir: fromRoot('dist'),
    emptyOutDir: true,
    target: 'es2022',
    // The core chunk is the single-file wasm build (binary embedded as base64), loaded lazily;
    // its size is expected, so only warn well above it.
    chunkSizeWarningLimit: 2048,
  },
  plugins: [contentSecurityPolicy()],
});
