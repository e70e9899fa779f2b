// The page's Content-Security-Policy, in one place: vite.config.ts writes it into the built page as
// a <meta> tag and web/serve.mjs sends it as a header (the header can also forbid framing).
//
// `connect-src data:`: the single-file wasm build embeds its binary as a data: URL, and Emscripten
// fetch()es that URL in a browser. Blocked, Emscripten falls back to decoding it itself, but the
// page logs a CSP violation on every load. A data: URL reaches no network, so allowing it keeps the
// policy's point: nothing leaves the page's own origin.

/** @type {Record<string, string>} */
const DIRECTIVES = {
  'default-src': "'self'",
  'script-src': "'self' 'wasm-unsafe-eval'",
  'style-src': "'self'",
  'img-src': "'self' data:",
  'font-src': "'self'",
  'connect-src': "'self' data:",
  'worker-src': "'self'",
  'object-src': "'none'",
  'base-uri': "'none'",
  'form-action': "'none'",
};

/** @param {Record<string, string>} directives */
function serialize(directives) {
  return Object.entries(directives)
    .map(([name, value]) => `${name} ${value}`)
    .join('; ');
}

/** For <meta http-equiv>; browsers ignore frame-ancestors there, so it is left out. */
export const CSP_META = serialize(DIRECTIVES);

/** For the HTTP header. */
export const CSP_HEADER = serialize({ ...DIRECTIVES, 'frame-ancestors': "'none'" });
