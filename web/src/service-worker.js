// The served site's service worker (dist/sw.js, written by vite.config.ts's serviceWorker plugin,
// which fills in BUILD): a repeat visit gets the page, the engine, the wasm core, ONNX Runtime and the
// class models from this build's cache at once, and the site works offline after one visit.
//
//   install    precaches every file of this build (content-hashed names, and index.html)
//   fetch      cache-first for this build's hashed files (a hashed name never changes content);
//              network-first for the page itself, so a new build is seen as soon as it is online,
//              the cached page when the network is gone; everything else goes to the network as is
//   activate   deletes the caches of other builds, then takes over the open pages
//
// Registered by the page (offline.ts) only on http(s) and not in the iframe mode; the one-file build
// (file://) has none. The iframe mode's page is left to the network: its headers allow framing.
// Plain JavaScript run as it is, so the few worker types it needs are declared here.

/**
 * @typedef {{ waitUntil(promise: Promise<unknown>): void }} ExtendableEvent
 * @typedef {ExtendableEvent & { request: Request, respondWith(response: Promise<Response>): void }} FetchEvent
 * @typedef {{
 *   addEventListener(type: 'install' | 'activate', listener: (event: ExtendableEvent) => void): void,
 *   addEventListener(type: 'fetch', listener: (event: FetchEvent) => void): void,
 *   skipWaiting(): Promise<void>,
 *   clients: { claim(): Promise<void> },
 *   registration: { scope: string },
 * }} ServiceWorkerScope
 */

const worker = /** @type {ServiceWorkerScope} */ (/** @type {unknown} */ (self));

/** Filled in at build time: the build's version (a hash of its files) and its files, relative to the scope. */
const BUILD = /** @type {{ version: string, page: string, files: string[] }} */ (/** @type {unknown} */ ('__PRENET_SW_BUILD__'));

/** Caches of this site are named by this prefix and a build's version; others are not touched. */
const PREFIX = 'prenet-calculator-';
const CACHE = `${PREFIX}${BUILD.version}`;
const scope = new URL(worker.registration.scope);
const PAGE = new URL(BUILD.page, scope).href;
const FILES = new Set(BUILD.files.map((file) => new URL(file, scope).href));

/**
 * The caches to delete when `current` activates: this site's caches of other builds.
 * @param {string[]} names
 * @param {string} current
 */
function staleCaches(names, current) {
  return names.filter((name) => name.startsWith(PREFIX) && name !== current);
}

worker.addEventListener('install', (event) => {
  // The files are fetched past the HTTP cache's revalidation only where the name is a content hash.
  const requests = [...FILES].map((url) => new Request(url, { cache: url === PAGE ? 'no-cache' : 'force-cache' }));
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(requests))
      .then(() => worker.skipWaiting()),
  );
});

worker.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(staleCaches(names, CACHE).map((name) => caches.delete(name))))
      .then(() => worker.clients.claim()),
  );
});

/**
 * Keeps a copy in this build's cache, if that cache still exists: a worker of an older build may
 * still answer a request while a newer one activates, and must not recreate the cache just deleted.
 * @param {string} url
 * @param {Response} response
 */
async function keep(url, response) {
  if (response.ok && (await caches.has(CACHE))) await (await caches.open(CACHE)).put(url, response);
}

/**
 * The page: from the network when it answers (and kept for offline use), else this build's copy.
 * @param {Request} request
 */
async function pageNetworkFirst(request) {
  try {
    const response = await fetch(request);
    await keep(PAGE, response.clone());
    return response;
  } catch (error) {
    const cached = await caches.match(PAGE, { cacheName: CACHE });
    if (cached !== undefined) return cached;
    throw error;
  }
}

/**
 * A hashed file of this build: from the cache, else fetched and kept.
 * @param {Request} request
 */
async function fileCacheFirst(request) {
  const cached = await caches.match(request.url, { cacheName: CACHE });
  if (cached !== undefined) return cached;
  const response = await fetch(request);
  await keep(request.url, response.clone());
  return response;
}

worker.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== scope.origin) return;
  const bare = `${url.origin}${url.pathname}`;
  if (request.mode === 'navigate') {
    const isPage = bare === PAGE || `${bare}index.html` === PAGE;
    // The iframe mode (?embed=1) is answered with other headers (framing allowed): left to the network.
    if (isPage && url.searchParams.get('embed') !== '1') event.respondWith(pageNetworkFirst(request));
    return;
  }
  if (FILES.has(bare) && bare !== PAGE) event.respondWith(fileCacheFirst(request));
});
