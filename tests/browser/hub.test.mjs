// The model by its Hub name (issue 21, point 4; web/src/hub.ts), on the served site and on the one
// file from file://. Test machines have no internet: every request for https://huggingface.co/** is
// routed to a local server that answers the Hub's paths (/<org>/<name>/resolve/<revision>/config.json)
// from the repository's real config fixtures (tests/fixtures/hf/<org>--<name>.json), like the Hub: a
// CORS-readable 200, a 404 for what it lacks and a 401 for a gated model. The page code is unchanged.
// Every other http(s) request is aborted and recorded, so "nothing else leaves the page" is checked.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { HUB_ORIGIN } from '../../web/csp.mjs';
import { engine as nodeEngine } from '../../web/cli/node-engine.mjs';
import { ARTIFACTS, chooseHardware, expectWithin, isInMemory, launch, servedOpener, settled, settledLearned, singleFileOpener } from './helpers.mjs';

const HF_FIXTURES = new URL('../fixtures/hf/', import.meta.url).pathname;
/** Models the local Hub treats as gated: their files answer 401 to anyone not signed in, as the Hub does. */
const GATED = new Set(['meta-llama/Llama-3.1-8B']);
/** A repo whose config.json the local Hub keeps in LFS: redirected to a CDN host, as the Hub does for LFS files. */
const IN_LFS = new Set(['Qwen/Qwen3-4B']);

/**
 * A local stand-in for huggingface.co's paths, answering as the Hub does (headers as seen from the Hub,
 * github.com/huggingface/swift-transformers/pull/209 and raullenchai/Rapid-MLX issue 1122): a resolve
 * URL gets a 307 to the Hub's own /api/resolve-cache/models/<repo>/<commit>/config.json, which serves
 * the file; an unknown repo a 401 "RepoNotFound", a gated one a 401 "GatedRepo", an unknown revision a
 * 404 "RevisionNotFound", each with the X-Error-Code the Hub exposes to scripts; a config kept in LFS
 * (IN_LFS) a 302 to a CDN host. Records every request
 * it answers (path and headers as the browser sent them).
 * @returns {Promise<{ origin: string, seen: Array<{ path: string, headers: import('node:http').IncomingHttpHeaders }>, close: () => void }>}
 */
function startLocalHub() {
  /** @type {Array<{ path: string, headers: import('node:http').IncomingHttpHeaders }>} */
  const seen = [];
  const cors = { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': 'X-Repo-Commit,X-Request-Id,X-Error-Code,X-Error-Message,ETag' };
  /** @param {import('node:http').ServerResponse} res @param {number} status @param {string} code @param {string} message */
  const refuse = (res, status, code, message) => {
    res.writeHead(status, { ...cors, 'Content-Type': 'text/plain; charset=utf-8', 'X-Error-Code': code, 'X-Error-Message': message });
    res.end(message);
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://hub');
    seen.push({ path: `${url.pathname}${url.search}`, headers: req.headers });
    const cached = /^\/api\/resolve-cache\/models\/([^/]+)\/([^/]+)\/([0-9a-f]{40})\/config\.json$/.exec(url.pathname);
    const resolve = /^\/([^/]+)\/([^/]+)\/resolve\/([^/]+)\/config\.json$/.exec(url.pathname);
    const [org = '', name = ''] = (cached ?? resolve ?? []).slice(1);
    const repo = `${org}/${name}`;
    const file = join(HF_FIXTURES, `${org}--${name}.json`);
    if (!existsSync(file)) return refuse(res, 401, 'RepoNotFound', 'Repository not found');
    if (GATED.has(repo)) return refuse(res, 401, 'GatedRepo', `Access to model ${repo} is restricted. You must have access to it and be authenticated to access it. Please log in.`);
    const bytes = readFileSync(file);
    const commit = createHash('sha1').update(bytes).digest('hex');
    if (resolve && IN_LFS.has(repo)) {
      res.writeHead(302, { ...cors, Location: `https://cdn-lfs.huggingface.co/repos/${commit}/config.json` });
      res.end();
      return;
    }
    if (resolve) {
      if (resolve[3] !== 'main') return refuse(res, 404, 'RevisionNotFound', `Invalid rev id: ${decodeURIComponent(resolve[3] ?? '')}`);
      const location = `/api/resolve-cache/models/${repo}/${commit}/config.json?${encodeURIComponent(url.pathname)}=`;
      res.writeHead(307, { ...cors, Location: location, 'X-Repo-Commit': commit, 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(`Temporary Redirect. Redirecting to ${location}`);
      return;
    }
    res.writeHead(200, { ...cors, 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': bytes.length, 'X-Repo-Commit': commit });
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
 * One request to the local Hub with exactly the headers the browser sent.
 * @param {string} url
 * @param {string} method
 * @param {Record<string, string>} headers
 * @returns {Promise<{ status: number, headers: Record<string, string>, body: Buffer }>}
 */
function ask(url, method, headers) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      /** @type {Buffer[]} */
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 500, headers: /** @type {Record<string, string>} */ (res.headers), body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Answers one routed request from the local Hub. Playwright does not route the request a redirect
 * leads to (playwright.dev, page.route: "does not intercept redirects"), so a redirect within
 * huggingface.co (the Hub's 307 to its cache address) is followed here, as the browser would, and the
 * final answer fulfils the page's request; a redirect to another host is passed to the browser, whose
 * CSP must refuse it.
 * @param {import('playwright-core').Route} route
 * @param {string} origin the local Hub
 */
async function forward(route, origin) {
  const request = route.request();
  const headers = await request.allHeaders();
  let url = new URL(request.url());
  let answer = await ask(`${origin}${url.pathname}${url.search}`, request.method(), headers);
  for (let hops = 0; answer.status >= 300 && answer.status < 400 && hops < 5; hops += 1) {
    const next = new URL(answer.headers['location'] ?? '', url);
    if (next.origin !== url.origin) break;
    url = next;
    answer = await ask(`${origin}${url.pathname}${url.search}`, request.method(), headers);
  }
  await route.fulfill({ status: answer.status, headers: answer.headers, body: answer.body });
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
    /** Why each failed request failed (Chromium's net error). */
    const failed = /** @type {Map<string, string>} */ (new Map());
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
      browser.context.on('requestfailed', (request) => failed.set(request.url(), request.failure()?.errorText ?? ''));
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
      // The Hub answered with a 307 to its own cache address (followed by `forward`) and then the file.
      assert.deepEqual(hub.seen.map((r) => r.path.replace(/[0-9a-f]{40}/, '<commit>').split('?')[0]), ['/Qwen/Qwen3-8B/resolve/main/config.json', '/api/resolve-cache/models/Qwen/Qwen3-8B/<commit>/config.json']);
      for (const header of ['cookie', 'referer', 'authorization']) {
        assert.equal(sent?.headers[header], undefined, `no ${header} header (${sent?.headers[header]})`);
        assert.equal(hub.seen[0]?.headers[header], undefined, `the Hub got no ${header} header`);
      }
      assert.ok(said.startsWith(`Fetched ${url}: `), `the message names the address: ${said}`);
      assert.ok(said.includes(`${file.length.toLocaleString('en-US')} bytes`), `the message gives the bytes: ${said}`);
      assert.match(said, / \(commit [0-9a-f]{12}\)\. The request sent only this address: no cookies, no referrer, nothing else from this page\.$/);
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

    test('an unknown model (the Hub\'s 401 RepoNotFound) and an unknown revision (404) say so', async () => {
      const before = hubRequests.length;
      const missing = await fetchByName('Qwen/No-Such-Model');
      assert.match(missing, /^No public model "Qwen\/No-Such-Model" on huggingface\.co: it does not exist or is private \(huggingface\.co: "Repository not found"\)/);
      assert.equal(await page.locator('#hub-name').getAttribute('aria-invalid'), null, 'a well-formed name is not marked invalid');
      const revision = await fetchByName('Qwen/Qwen3-8B@v9');
      assert.match(revision, /^"Qwen\/Qwen3-8B" has no revision "v9" \(HTTP 404\)/);
      assert.equal(hubRequests.length, before + 2, 'one request each, no redirect followed');
      assert.match((await page.locator('#config-kind').textContent()) ?? '', /qwen3/, 'the config in the box is kept');
    });

    test('a gated model: HTTP 401 says to download config.json and paste it', async () => {
      const said = await fetchByName('meta-llama/Llama-3.1-8B');
      assert.match(said, /^"meta-llama\/Llama-3\.1-8B" is gated or private: .*\(HTTP 401\).*download its config\.json yourself .* paste or upload it here/);
      assert.equal(await page.locator('#config').inputValue(), readFileSync(join(HF_FIXTURES, 'Qwen--Qwen3-8B.json'), 'utf8'), 'the config in the box is unchanged');
      assert.match(said, /huggingface\.co: "Access to model meta-llama\/Llama-3\.1-8B is restricted/, 'the Hub\'s own reason is quoted');
      assert.match((await page.locator('#config-kind').textContent()) ?? '', /qwen3/, 'the config in the box is kept');
      await shot('gated');
    });

    test('a redirect off huggingface.co (a config kept in LFS) is refused by the CSP and said so', async () => {
      const said = await fetchByName('Qwen/Qwen3-4B');
      assert.match(said, /^huggingface\.co redirected the request to another host \(as it does for files kept in Git LFS\), which this page may not contact/);
      // Playwright reports the redirect's request (it does not route it); the browser refused it unsent.
      const cdn = browser.requests.filter((url) => url.startsWith('https://cdn-lfs.huggingface.co/'));
      assert.equal(cdn.length, 1, `one redirect to the CDN host: ${cdn}`);
      assert.equal(failed.get(cdn[0] ?? ''), 'net::ERR_ABORTED', 'the redirect was not completed');
      assert.ok(browser.problems.some((problem) => problem.includes(cdn[0] ?? '?') && /Content Security Policy/.test(problem)), `the browser names the CSP as the reason: ${browser.problems}`);
      assert.deepEqual(foreign, []);
      assert.match((await page.locator('#config-kind').textContent()) ?? '', /qwen3/, 'the config in the box is kept');
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
      const refused = (/** @type {string} */ url) => browser.problems.some((problem) => problem.includes(url) && /Content Security Policy/.test(problem));
      const other = browser.requests.filter((url) => !isInMemory(url) && !target.ownFile(url) && !url.startsWith(`${HUB_ORIGIN}/`) && !refused(url));
      assert.deepEqual(other, [], 'requests for anything but the page\'s own files and huggingface.co');
      assert.deepEqual(foreign, []);
      const paths = hubRequests.map((r) => new URL(r.url).pathname.replace(/[0-9a-f]{40}/, '<commit>'));
      assert.deepEqual(paths, [
        '/Qwen/Qwen3-8B/resolve/main/config.json',
        '/Qwen/No-Such-Model/resolve/main/config.json',
        '/Qwen/Qwen3-8B/resolve/v9/config.json',
        '/meta-llama/Llama-3.1-8B/resolve/main/config.json',
        '/Qwen/Qwen3-4B/resolve/main/config.json',
      ]);
      // Chromium logs the 404 and 401 answers and the example.com violation; nothing else may go wrong.
      const expected = [/Failed to load resource: the server responded with a status of (404|401)/, /example\.com/, /cdn-lfs\.huggingface\.co/];
      assert.deepEqual(browser.problems.filter((problem) => !expected.some((pattern) => pattern.test(problem))), [], 'console errors or uncaught exceptions');
    });
  });
}

const served = servedOpener();
hubSuite('the model by its Hub name, on the served site', served.open, ["'self'", 'data:'], served.close);

const single = singleFileOpener();
hubSuite('the model by its Hub name, in the one file from file://', single.open, ['data:'], single.close);
