// Registers the served site's service worker (dist/sw.js, web/src/service-worker.js): after one visit
// the page, the engine and the learned models come from this build's cache, so a repeat visit shows
// learned numbers at once and the site works offline.
//
// Only where it can and should: a built site (the dev server has no sw.js), over http(s) (the one-file
// build runs from file://, which has no service workers), not in the iframe mode (a host page framing
// the calculator should not have a worker installed on its visitors' behalf).

/** Whether this page should register the service worker; why not otherwise. */
export function offlineCacheWanted(embed: boolean): string | null {
  if (import.meta.env.DEV || __PRENET_BUILD__ !== 'site') return 'not a built site';
  if (embed) return 'the iframe mode';
  if (location.protocol !== 'http:' && location.protocol !== 'https:') return `pages from ${location.protocol}// have no service workers`;
  if (!('serviceWorker' in navigator)) return 'this browser has no service workers';
  return null;
}

/**
 * Registers sw.js beside the page. Called once the page has shown its learned result, so that the
 * worker's precaching (the whole build) does not compete with the first visit's own loading. A failure
 * only costs the offline copy: it is logged, never shown as an error of the calculator.
 */
export function registerOfflineCache(embed: boolean): void {
  const reason = offlineCacheWanted(embed);
  document.documentElement.dataset.offlineCache = reason === null ? 'registering' : 'off';
  if (reason !== null) return;
  navigator.serviceWorker
    .register('./sw.js', { scope: './' })
    .then(() => navigator.serviceWorker.ready)
    .then(() => (document.documentElement.dataset.offlineCache = 'ready'))
    .catch((error: unknown) => {
      document.documentElement.dataset.offlineCache = 'failed';
      console.info(`prenet: no offline copy (${error instanceof Error ? error.message : String(error)})`);
    });
}
