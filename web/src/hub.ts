// The model by its Hugging Face Hub name (issue 21, point 4): the user types `org/name` and presses
// "Fetch config"; only then does the page ask huggingface.co for that model's public config.json,
// which arrives in the config box as if it had been pasted (config-input.ts `loaded`).
//
// This is the one request the page ever sends off its own origin. The CSP (web/csp.mjs) names
// huggingface.co in connect-src and nothing else; the request carries no cookies, no referrer and
// no body: only the model's name and revision, in the URL. The page says exactly what it fetched.

import { HUB_ORIGIN } from '../csp.mjs';
import type { ConfigInputEvents } from './config-input';
import { byId } from './dom';

/** The Hub's own rule for repo ids (huggingface_hub `validate_repo_id`): at most 96 characters. */
const MAX_REPO_ID = 96;
/** A git ref (branch, tag, commit, `refs/pr/1`); the Hub caps nothing lower that we know of. */
const MAX_REVISION = 128;
/** An answer slower than this is reported as such rather than leaving the button busy. */
const TIMEOUT_MS = 20_000;
/** One part of a repo id: letters, digits, `-`, `_`, `.`; no `--` or `..`, not starting or ending with `-` or `.`. */
const PART = /^(?![-.])(?!.*(--|\.\.))[A-Za-z0-9._-]+(?<![-.])$/;
const REVISION = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;

export type HubName = { ok: true; repo: string; revision: string; url: string } | { ok: false; message: string };

/**
 * Reads what the user typed: `org/name`, optionally `@revision`, or the model's page address
 * (`https://huggingface.co/org/name`) copied from the browser. Never guesses: anything else is refused
 * with what was expected.
 */
export function parseHubName(typed: string): HubName {
  const text = typed.trim().replace(/^https:\/\/(huggingface\.co|hf\.co)\//, '').replace(/\/+$/, '');
  const expected = 'expected org/name (optionally @revision), e.g. Qwen/Qwen3-8B or Qwen/Qwen3-8B@main';
  if (text === '') return { ok: false, message: `Hub name: empty; ${expected}` };
  const at = text.indexOf('@');
  const repo = at < 0 ? text : text.slice(0, at);
  const revision = at < 0 ? 'main' : text.slice(at + 1);
  const parts = repo.split('/');
  if (parts.length !== 2) {
    const hint = parts.length === 1 ? ' (models without an org now live under one: gpt2 is openai-community/gpt2)' : '';
    return { ok: false, message: `Hub name: "${clip(repo)}" is not org/name${hint}; ${expected}` };
  }
  const bad = parts.find((part) => !PART.test(part));
  if (bad !== undefined) {
    return { ok: false, message: `Hub name: "${clip(bad)}" may hold only letters, digits, "-", "_" and "." (not first or last, never doubled); ${expected}` };
  }
  if (repo.length > MAX_REPO_ID) return { ok: false, message: `Hub name: "${clip(repo)}" is ${repo.length} characters; the Hub allows at most ${MAX_REPO_ID}` };
  if (!REVISION.test(revision) || revision.length > MAX_REVISION || revision.includes('..')) {
    return { ok: false, message: `Hub name: revision "${clip(revision)}" is not a branch, tag or commit name (letters, digits, "-", "_", ".", "/"; at most ${MAX_REVISION})` };
  }
  return { ok: true, repo, revision, url: `${HUB_ORIGIN}/${repo}/resolve/${encodeURIComponent(revision)}/config.json` };
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** What one fetch came to. */
export type HubOutcome =
  | { kind: 'fetched'; text: string; bytes: number; url: string; redirectedTo: string | null; commit: string | null }
  | { kind: 'http'; status: number; errorCode: string | null; serverSays: string }
  | { kind: 'too-large'; bytes: number; limit: number }
  | { kind: 'not-text' }
  | { kind: 'blocked' }
  | { kind: 'timeout' }
  | { kind: 'offline' }
  | { kind: 'unreachable'; reason: string };

/**
 * The request itself: a plain GET (no custom header, so no CORS preflight), without cookies or a
 * referrer, not stored in the HTTP cache. A redirect is followed only as far as the CSP allows:
 * huggingface.co itself (it answers a resolve URL with a 307 to its /api/resolve-cache/… address, and
 * a renamed repo with one to the new name); one to another host is refused by the browser and
 * reported, recognised by the CSP violation it raises.
 */
export async function fetchHubConfig(url: string, limit: number): Promise<HubOutcome> {
  if (!navigator.onLine) return { kind: 'offline' };
  let blocked = false;
  const onViolation = (event: SecurityPolicyViolationEvent): void => {
    if (event.violatedDirective.startsWith('connect-src')) blocked = true;
  };
  document.addEventListener('securitypolicyviolation', onViolation);
  try {
    const response = await fetch(url, {
      method: 'GET',
      credentials: 'omit',
      referrerPolicy: 'no-referrer',
      cache: 'no-store',
      mode: 'cors',
      redirect: 'follow',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (!response.ok) return { kind: 'http', status: response.status, errorCode: response.headers.get('x-error-code'), serverSays: await serverMessage(response) };
    return await readLimited(response, url, limit);
  } catch (error) {
    if (error instanceof DOMException && error.name === 'TimeoutError') return { kind: 'timeout' };
    // The violation event may arrive just after the rejected fetch: give it one task to land.
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (blocked) return { kind: 'blocked' };
    if (!navigator.onLine) return { kind: 'offline' };
    return { kind: 'unreachable', reason: error instanceof Error ? error.message : String(error) };
  } finally {
    document.removeEventListener('securitypolicyviolation', onViolation);
  }
}

/** The body as text, stopped as soon as it passes the core's request limit (the Content-Length may be absent). */
async function readLimited(response: Response, url: string, limit: number): Promise<HubOutcome> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > limit) {
    void response.body?.cancel();
    return { kind: 'too-large', bytes: declared, limit };
  }
  const reader = response.body?.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (let part = await reader?.read(); part !== undefined && !part.done; part = await reader?.read()) {
    bytes += part.value.byteLength;
    if (bytes > limit) {
      void reader?.cancel();
      return { kind: 'too-large', bytes, limit };
    }
    chunks.push(part.value);
  }
  const whole = new Uint8Array(bytes);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(whole);
  } catch {
    return { kind: 'not-text' };
  }
  if (text.includes('\u0000') || text.trim() === '') return { kind: 'not-text' };
  const redirectedTo = response.redirected && response.url !== url ? response.url : null;
  return { kind: 'fetched', text, bytes, url, redirectedTo, commit: response.headers.get('x-repo-commit') };
}

/** The Hub's reason for an error (its X-Error-Message, else the first line of the body), kept short. */
async function serverMessage(response: Response): Promise<string> {
  const text = response.headers.get('x-error-message') ?? (await response.text().catch(() => ''));
  let said = text;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && 'error' in parsed && typeof parsed.error === 'string') said = parsed.error;
  } catch {
    // not JSON: the text itself
  }
  const line = said.split('\n')[0]?.trim() ?? '';
  return line.length > 160 ? `${line.slice(0, 157)}…` : line;
}

/** KiB with one decimal under 10 KiB, so a config's size reads exactly enough. */
function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB (${bytes.toLocaleString('en-US')} bytes)`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

const PASTE_IT = 'download its config.json yourself (signed in on huggingface.co, after accepting its terms) and paste or upload it here';

/** One sentence for the user about an outcome that brought no config. */
export function failureMessage(name: { repo: string; revision: string; url: string }, outcome: Exclude<HubOutcome, { kind: 'fetched' }>): string {
  const said = outcome.kind === 'http' && outcome.serverSays !== '' ? ` (huggingface.co: "${outcome.serverSays}")` : '';
  switch (outcome.kind) {
    case 'http':
      if (outcome.status === 401 || outcome.status === 403) {
        if (outcome.errorCode === 'RepoNotFound') return `No public model "${name.repo}" on huggingface.co: it does not exist or is private${said}. Check the name, or ${PASTE_IT}.`;
        return `"${name.repo}" is gated or private: huggingface.co gives its files only to signed-in users who accepted its terms (HTTP ${outcome.status})${said}. This page never signs in: ${PASTE_IT}.`;
      }
      if (outcome.status === 404) {
        if (outcome.errorCode === 'EntryNotFound') return `"${name.repo}" has no config.json at revision "${name.revision}" (HTTP 404)${said}.`;
        if (outcome.errorCode === 'RevisionNotFound') return `"${name.repo}" has no revision "${name.revision}" (HTTP 404)${said}.`;
        return `No model "${name.repo}" (with a config.json at revision "${name.revision}") on huggingface.co (HTTP 404)${said}. Check the name and revision.`;
      }
      return `huggingface.co answered HTTP ${outcome.status} for ${name.url}${said}; nothing was loaded. Try again later, or ${PASTE_IT}.`;
    case 'too-large':
      return `The answer is ${sizeText(outcome.bytes)}, more than the ${sizeText(outcome.limit)} the calculator reads; it was not loaded.`;
    case 'not-text':
      return `The answer is empty or not text (expected config.json's JSON); it was not loaded.`;
    case 'blocked':
      // The browser reports a refused redirect under the first URL's origin, so the other host has no name here.
      return `huggingface.co redirected the request to another host (as it does for files kept in Git LFS), which this page may not contact: its Content-Security-Policy allows huggingface.co only. Nothing was loaded; ${PASTE_IT}.`;
    case 'timeout':
      return `huggingface.co did not answer within ${TIMEOUT_MS / 1000} s; nothing was loaded. Try again, or ${PASTE_IT}.`;
    case 'offline':
      return `You are offline: nothing was sent, and the config of "${name.repo}" cannot be fetched now. The calculator itself works offline: paste or upload a config.json you have.`;
    case 'unreachable':
      return `Could not reach huggingface.co (${outcome.reason}): no network, a filter in between, or the server refused the browser's request. Nothing was loaded.`;
  }
}

/**
 * What a successful fetch says: the address, where huggingface.co redirected it (it answers a resolve
 * URL with a redirect to its own cache address, /api/resolve-cache/…), the commit, the size, and that
 * nothing else was sent.
 */
export function fetchedMessage(outcome: Extract<HubOutcome, { kind: 'fetched' }>): string {
  const via = outcome.redirectedTo === null ? '' : `, which huggingface.co redirected to ${outcome.redirectedTo}`;
  const commit = outcome.commit === null ? '' : ` (commit ${outcome.commit.slice(0, 12)})`;
  return `Fetched ${outcome.url}${via}: ${sizeText(outcome.bytes)}${commit}. The request sent only this address: no cookies, no referrer, nothing else from this page.`;
}

/**
 * Wires the Hub name box: nothing happens while typing (the field's input events stay out of the form's
 * recompute); "Fetch config" or Enter sends the one request and hands a fetched config to `events.loaded`
 * (the same path as a pasted or uploaded one). `limit`: the largest text the core reads.
 */
export function wireHubFetch(events: Pick<ConfigInputEvents, 'loaded'>, limit: number): void {
  const input = byId('hub-name', HTMLInputElement);
  const button = byId('hub-fetch', HTMLButtonElement);
  const status = byId('hub-status', HTMLElement);
  const say = (text: string, state: 'busy' | 'done' | 'error' | ''): void => {
    status.textContent = text;
    status.dataset.state = state;
  };
  input.addEventListener('input', (event) => {
    event.stopPropagation(); // a name being typed changes no scenario
    input.removeAttribute('aria-invalid');
  });
  const run = async (): Promise<void> => {
    if (button.disabled) return;
    const name = parseHubName(input.value);
    if (!name.ok) {
      input.setAttribute('aria-invalid', 'true');
      say(name.message, 'error');
      return;
    }
    button.disabled = true;
    say(`Fetching ${name.url} …`, 'busy');
    try {
      const outcome = await fetchHubConfig(name.url, limit);
      if (outcome.kind !== 'fetched') {
        say(failureMessage(name, outcome), 'error');
        return;
      }
      say(fetchedMessage(outcome), 'done');
      events.loaded(outcome.text, `${name.repo} config.json`);
    } finally {
      button.disabled = false;
    }
  };
  button.addEventListener('click', () => void run());
  input.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter') return;
    event.preventDefault(); // not the form's submit: Enter here means "fetch"
    void run();
  });
  // Clearing the config leaves no claim about what is in the box.
  byId('config-clear', HTMLButtonElement).addEventListener('click', () => say('', ''));
}
