// The page's Content-Security-Policy, in one place: vite.config.ts writes it into the built pages as
// a <meta> tag and web/serve.mjs sends it as a header (only a header can restrict framing).
//
// `connect-src data:`: the single-file wasm build embeds its binary as a data: URL, and Emscripten
// fetch()es that URL in a browser. Blocked, Emscripten falls back to decoding it itself, but the
// page logs a CSP violation on every load. A data: URL reaches no network, so allowing it keeps the
// policy's point: nothing leaves the page's own origin.
//
// `connect-src https://huggingface.co`: the one exception (issue 21, point 4, web/src/hub.ts). On
// an explicit "Fetch config" press the page GETs one model's public config.json from
// https://huggingface.co/<org>/<name>/resolve/<revision>/config.json, without cookies or referrer.
// config.json is a small regular (not LFS) file: huggingface.co answers with a 307 to its own
// /api/resolve-cache/… address and serves it from there, both readable cross-origin; only large LFS
// files are redirected to CDN hosts. So no other host is allowed; a redirect elsewhere is refused by
// the browser and reported by the page. connect-src only: no script, style, image or frame may come
// from there.

/** The only origin outside the page that it may contact, for the Hub config fetch only. */
export const HUB_ORIGIN = 'https://huggingface.co';

/** @type {Record<string, string>} */
const DIRECTIVES = {
  'default-src': "'self'",
  'script-src': "'self' 'wasm-unsafe-eval'",
  'style-src': "'self'",
  'img-src': "'self' data:",
  'font-src': "'self'",
  'connect-src': `'self' data: ${HUB_ORIGIN}`,
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

/** For the HTTP header: the page may not be framed. */
export const CSP_HEADER = serialize({ ...DIRECTIVES, 'frame-ancestors': "'none'" });

/**
 * For the HTTP header of the iframe mode (`?embed=1`), which exists to be framed by other sites.
 * Framing cannot hurt here: the page has no account, no state-changing action and sends nothing.
 */
export const CSP_HEADER_EMBED = serialize({ ...DIRECTIVES, 'frame-ancestors': '*' });

/**
 * The one-file build (dist/prenet-calculator.html) has no "self" to trust: opened from file://, its
 * origin is opaque. Its scripts and styles are inline, allowed by hash; the engine runs from a blob:
 * URL (a worker, or a script when no worker can start); nothing else may load at all, and the only
 * connection allowed is the Hub config fetch (online; offline the page says so).
 * @param {{ scripts: string[], styles: string[] }} hashes CSP sources like 'sha256-…'
 */
export function singleFileCsp(hashes) {
  return serialize({
    'default-src': "'none'",
    'script-src': `${hashes.scripts.join(' ')} 'wasm-unsafe-eval' blob:`,
    'style-src': hashes.styles.join(' ') || "'none'",
    'img-src': 'data:',
    'connect-src': `data: ${HUB_ORIGIN}`,
    'worker-src': 'blob:',
    'object-src': "'none'",
    'base-uri': "'none'",
    'form-action': "'none'",
  });
}
