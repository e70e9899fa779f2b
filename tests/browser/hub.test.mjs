// The model by its Hub name (issue 21, point 4; web/src/hub.ts), on the served site and on the one
// file from file://. Test machines have no internet: every request for https://huggingface.co/** is
// routed to a local server that answers the Hub's paths (/<org>/<name>/resolve/<revision>/config.json)
// from the repository's real config fixtures (tests/fixtures/hf/<org>--<name>.json), like the Hub: a
// CORS-readable 200, a 404 for what it lacks and a 401 for a gated model. The page code is unchanged.
// Every other http(s) request is aborted and recorded, so "nothing else leaves the page" is checked.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { HUB_ORIGIN } from '../../web/csp.mjs';
import { engine as nodeEngine } from '../../web/cli/node-engine.mjs';
import { ARTIFACTS, chooseHardware, expectWithin, isInMemory, launch, requireBuilt, servedTarget, settled, settledLearned, singleFileTarget, startServer } from './helpers.mjs';

const HF_FIXTURES = new URL('../fixtures/hf/', import.meta.url).pathname;
/** Models the local Hub treats as gated: their files answer 401 to anyone not signed in, as the Hub does. */
const GATED = new Set(['meta-llama/Llama-3.1-8B']);

/**
 * A local stand-in for huggingface.co's resolve paths. Records every request it answers (path and
 * headers as the browser sent them).
 * @returns {Promise<{ origin: string, seen: Array<{ path: string, headers: import('node:http').IncomingHttpHeaders }>, close: () => void }>}
 */
function startLocalHub() {
  /** @type {Array<{ path: string, headers: import('node:http').IncomingHttpHeaders }>} */
  const seen = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://hub').pathname;
    seen.push({ path, headers: req.headers });
    const cors = { 'Access-Control-Allow-Origin': '*' };
    const match = /^\/([^/]+)\/([^/]+)\/resolve\/([^/]+)\/config\.json$/.exec(path);
    const repo = match ? `${match[1]}/${match[2]}` : '';
    if (GATED.has(repo)) {
      res.writeHead(401, { ...cors, 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(`Access to model ${repo} is restricted. You must have access to it and be authenticated to access it. Please log in.`);
      return;
    }
    const file = match ? join(HF_FIXTURES, `${match[1]}--${match[2]}.json`) : '';
    if (!match || match[3] !== 'main' || !existsSync(file)) {
      res.writeHead(404, { ...cors, 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('Repository not found');
      return;
    }
    const bytes = readFileSync(file);
    res.writeHead(200, { ...cors, 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': bytes.length });
    res.end(bytes);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      resolve({ origin: `http://127.0.0.1:${port}`, seen, close: () => server.close() });
    });
  });
}

/**
 * Forwards one routed request to the local Hub with exactly the headers the browser would send, and
 * fulfils the page's request with the answer.
 * @param {import('playwright-core').Route} route
 * @param {string} origin the local Hub
 */
async function forward(route, origin) {
  const url = new URL(route.request().url());
  const headers = await route.request().allHeaders();
  const answer = await new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}${url.pathname}${url.search}`, { method: route.request().method(), headers }, (res) => {
      /** @type {Buffer[]} */
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 500, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
  const { status, headers: responseHeaders, body } = /** @type {{ status: number, headers: Record<string, string>, body: Buffer }} */ (answer);
  await route.fulfill({ status, headers: responseHeaders, body });
}

/** The `connect-src` sources of a policy text. */
function connectSources(/** @type {string} */ policy) {
  const directive = policy.split(';').map((part) => part.trim()).find((part) => part.startsWith('connect-src '));
  return (directive ?? '').split(/\s+/).slice(1).sort();
}

/**
 * @param {string} title
 * @param {() => Promise<import('./helpers.mjs').Target>} open
 * @param {string[]} ownConnect the connect-src sources the page's own build needs besides the Hub
 * @param {() => void} [close]
 */
function hubSuite(title, open, ownConnect, close) {
  describe(title, () => {
    /** @type {import('./helpers.mjs').Target} */
    let target;
    /** @type {Awaited<ReturnType<typeof launch>>} */
    let browser;
    /** @type {import('playwright-core').Page} */
    let page;
    /** @type {Awaited<ReturnType<typeof startLocalHub>>} */
    let hub;
    /** Every request the page made to huggingface.co, with its headers. */
    const hubRequests = /** @type {Array<{ url: string, method: string, headers: Record<string, string> }>} */ ([]);
    /** http(s) requests to anything but the page's own files and huggingface.co: aborted. */
    const foreign = /** @type {string[]} */ ([]);
    const shot = (/** @type {string} */ name) => page.screenshot({ path: join(ARTIFACTS, `hub-${target.name}-${name}.png`), fullPage: true });
    const within = (/** @type {string} */ what, /** @type {() => Promise<unknown>} */ wait) => expectWithin(page, what, wait, browser.problems);
    const status = () => page.locator('#hub-status');
    /** Presses "Fetch config" for `name` and waits until the page has said how it went. */
    const fetchByName = async (/** @type {string} */ name) => {
      await page.locator('#hub-name').fill(name);
      await page.locator('#hub-fetch').click();
      await within(`no outcome for "${name}"`, () => page.waitForFunction(() => ['done', 'error'].includes(document.querySelector('#hub-status')?.getAttribute('data-state') ?? '')));
      return (await status().textContent()) ?? '';
    };

    before(async () => {
      target = await open();
      hub = await startLocalHub();
      browser = await launch();
      page = browser.page;
      // A cookie the Hub would have set for a signed-in user: the page must never send it.
      await browser.context.addCookies([{ name: 'token', value: 'signed-in-session', domain: 'huggingface.co', path: '/', secure: true, httpOnly: true, sameSite: 'None' }]);
      await browser.context.route(/^https?:/, (route) => {
        const url = route.request().url();
        if (target.ownFile(url)) return route.continue();
        foreign.push(url);
        return route.abort('blockedbyclient');
      });
      // Registered last, so it is asked first (Playwright runs routes in reverse order).
      await browser.context.route(`${HUB_ORIGIN}/**`, async (route) => {
        const request = route.request();
        hubRequests.push({ url: request.url(), method: request.method(), headers: await request.allHeaders() });
        return forward(route, hub.origin);
      });
    });

    after(async () => {
      await browser?.close();
      hub?.close();
      close?.();
    });

    test('nothing is fetched from the Hub while the page loads and while a name is typed', async () => {
      await page.goto(target.url);
      // The learned models replace the first numbers with a second render: wait for it, so the renders
      // counted below can only change by typing.
      await within('the page never rendered its learned numbers', () => settledLearned(page));
      // Accelerators that train in the config's BF16 (the V100 of an older default cannot).
      await chooseHardware(page, ['h100-sxm', 'a100-sxm4-80gb']);
      await within('the chosen accelerators were never computed', () => settledLearned(page));
      const renders = await page.evaluate(() => document.documentElement.dataset.renders);
      await page.locator('#hub-name').pressSequentially('Qwen/Qwen3-8B');
      await page.waitForTimeout(500);
      assert.deepEqual(hubRequests, [], 'no request to huggingface.co before the button is pressed');
      assert.equal(await page.evaluate(() => document.documentElement.dataset.renders), renders, 'typing a name recomputes nothing');
      assert.equal(await status().textContent(), '', 'no message yet');
    });

    test('the button fetches exactly one config.json, without cookies or referrer, and the model is read', async () => {
      const file = readFileSync(join(HF_FIXTURES, 'Qwen--Qwen3-8B.json'));
      const said = await fetchByName('Qwen/Qwen3-8B');
      const url = `${HUB_ORIGIN}/Qwen/Qwen3-8B/resolve/main/config.json`;
      assert.equal(hubRequests.length, 1, `exactly one request to huggingface.co: ${JSON.stringify(hubRequests.map((r) => r.url))}`);
      const [sent] = hubRequests;
      assert.equal(sent?.url, url);
      assert.equal(sent?.method, 'GET');
      for (const header of ['cookie', 'referer', 'authorization']) {
        assert.equal(sent?.headers[header], undefined, `no ${header} header (${sent?.headers[header]})`);
        assert.equal(hub.seen[0]?.headers[header], undefined, `the Hub got no ${header} header`);
      }
      assert.deepEqual(hub.seen.map((r) => r.path), ['/Qwen/Qwen3-8B/resolve/main/config.json']);
      assert.ok(said.startsWith(`Fetched ${url}: `) && said.includes(`${file.length.toLocaleString('en-US')} bytes`), `the message names the address and the bytes: ${said}`);
      assert.match(said, /The request sent only this address: no cookies, no referrer, nothing else from this page\.$/);
      assert.equal(await page.locator('#config').inputValue(), file.toString('utf8'), 'the fetched text is in the config box, as if pasted');
      const expected = await nodeEngine.predict({ model: { hf_config: JSON.parse(file.toString('utf8')) }, hardware: ['h100-sxm'] });
      const count = expected.model.parameters.toLocaleString('en-US');
      await within(`the summary never showed the model's ${count} parameters`, () =>
        page.waitForFunction((text) => /Hugging Face config/.test(document.querySelector('#summary')?.textContent ?? '') && (document.querySelector('#summary')?.textContent ?? '').includes(text), count),
      );
      await settled(page);
      assert.match((await page.locator('#config-kind').textContent()) ?? '', /Read as: Hugging Face config \(model_type "qwen3"\)/);
      await shot('fetched');
    });

    test('a malformed name is refused with what was expected, and nothing is sent', async () => {
      const before = hubRequests.length;
      for (const name of ['Qwen3-8B', 'Qwen/Qwen3 8B', 'a/b/c', `Qwen/${'x'.repeat(100)}`, 'Qwen/Qwen3-8B@..']) {
        const said = await fetchByName(name);
        assert.match(said, /^Hub name: .*(expected org\/name|letters, digits|at most 96|revision)/, `"${name}": ${said}`);
        assert.equal(await page.locator('#hub-name').getAttribute('aria-invalid'), 'true');
      }
      assert.equal(hubRequests.length, before, 'no request for a malformed name');
    });

    test('an unknown model: HTTP 404 says there is no such model', async () => {
      const before = hubRequests.length;
      const said = await fetchByName('Qwen/No-Such-Model');
      assert.match(said, /^No model "Qwen\/No-Such-Model" .* on huggingface\.co \(HTTP 404\)/);
      assert.equal(hubRequests.length, before + 1);
      assert.equal(await page.locator('#hub-name').getAttribute('aria-invalid'), null);
      assert.match((await page.locator('#config-kind').textContent()) ?? '', /qwen3/, 'the config in the box is kept');
    });

    test('a gated model: HTTP 401 says to download config.json and paste it', async () => {
      const said = await fetchByName('meta-llama/Llama-3.1-8B');
      assert.match(said, /^"meta-llama\/Llama-3\.1-8B" is gated or private: .*\(HTTP 401\).*download its config\.json yourself .* paste or upload it here/);
      assert.match(said, /huggingface\.co: "Access to model meta-llama\/Llama-3\.1-8B is restricted/, 'the Hub\'s own reason is quoted');
      assert.match((await page.locator('#config-kind').textContent()) ?? '', /qwen3/, 'the config in the box is kept');
      await shot('gated');
    });

    test('offline, the page says so and sends nothing', async () => {
      const before = hubRequests.length;
      await browser.context.setOffline(true);
      try {
        const said = await fetchByName('Qwen/Qwen3-0.6B');
        assert.match(said, /^You are offline: nothing was sent/);
        assert.equal(hubRequests.length, before, 'no request while offline');
        await shot('offline');
      } finally {
        await browser.context.setOffline(false);
      }
    });

    test('the CSP names huggingface.co for connections only, and still blocks every other host', async () => {
      const policy = (await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content')) ?? '';
      assert.deepEqual(connectSources(policy), [...ownConnect, HUB_ORIGIN].sort(), `connect-src: ${policy}`);
      const elsewhere = policy.split(';').filter((part) => !part.trim().startsWith('connect-src ') && part.includes('huggingface'));
      assert.deepEqual(elsewhere, [], 'huggingface.co appears in no other directive');
      const outcome = await page.evaluate(async () => {
        /** @type {string[]} */
        const violations = [];
        document.addEventListener('securitypolicyviolation', (event) => violations.push(`${event.violatedDirective} ${event.blockedURI}`));
        const result = await fetch('https://example.com/collect?data=1', { method: 'POST', body: 'x' }).then(
          () => 'fetched',
          (error) => `refused: ${error}`,
        );
        await new Promise((resolve) => setTimeout(resolve, 50));
        return { result, violations };
      });
      assert.match(outcome.result, /^refused: TypeError/);
      assert.ok(outcome.violations.some((v) => /^connect-src https:\/\/example\.com\//.test(v)), `a connect-src violation: ${outcome.violations}`);
      assert.deepEqual(foreign, [], 'the blocked fetch never reached the network');
    });

    test('nothing else left the page: its own files and the Hub requests above', () => {
      const other = browser.requests.filter((url) => !isInMemory(url) && !target.ownFile(url) && !url.startsWith(`${HUB_ORIGIN}/`));
      assert.deepEqual(other, [], 'requests for anything but the page\'s own files and huggingface.co');
      assert.deepEqual(foreign, []);
      assert.deepEqual(hubRequests.map((r) => r.url.replace(HUB_ORIGIN, '')), ['/Qwen/Qwen3-8B/resolve/main/config.json', '/Qwen/No-Such-Model/resolve/main/config.json', '/meta-llama/Llama-3.1-8B/resolve/main/config.json']);
      // Chromium logs the 404 and 401 answers and the example.com violation; nothing else may go wrong.
      const expected = [/Failed to load resource: the server responded with a status of (404|401)/, /example\.com/];
      assert.deepEqual(browser.problems.filter((problem) => !expected.some((pattern) => pattern.test(problem))), [], 'console errors or uncaught exceptions');
    });
  });
}

/** @type {{ url: string, stop: () => void } | undefined} */
let server;

hubSuite(
  'the model by its Hub name, on the served site',
  async () => {
    requireBuilt();
    server = await startServer();
    return servedTarget(server.url);
  },
  ["'self'", 'data:'],
  () => server?.stop(),
);

hubSuite(
  'the model by its Hub name, in the one file from file://',
  async () => {
    requireBuilt();
    return singleFileTarget();
  },
  ['data:'],
);
