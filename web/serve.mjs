#!/usr/bin/env node
// Serves the built page (dist/) on 127.0.0.1 with the page's Content-Security-Policy as a header.
// Port: $PORT, else 5173; if that port is taken, any free port. PORT=0 asks for a free port.
// Prints the URL as the first line on stdout (the browser tests read it).

import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CSP_HEADER, CSP_HEADER_EMBED } from './csp.mjs';

const ROOT = fileURLToPath(new URL('../dist/', import.meta.url));
const HOST = '127.0.0.1';

/** @type {Record<string, string>} */
const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.onnx': 'application/octet-stream',
};

const SECURITY_HEADERS = {
  'Content-Security-Policy': CSP_HEADER,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

/** The iframe mode (`?embed=1`, docs/EMBED.md) is meant to be framed by other sites. */
const EMBED_HEADERS = { ...SECURITY_HEADERS, 'Content-Security-Policy': CSP_HEADER_EMBED };

/**
 * The file under ROOT a URL path names, or null if it would escape ROOT.
 * @param {string} urlPath
 */
function resolvePath(urlPath) {
  let decoded;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  const relative = normalize(decoded.endsWith('/') ? `${decoded}index.html` : decoded);
  const full = join(ROOT, relative);
  return full.startsWith(ROOT) ? full : null;
}

/** @param {string} path a file under ROOT @returns {string} its path below ROOT, with forward slashes */
function relativeToRoot(path) {
  return path.slice(ROOT.length).split(sep).join('/');
}

/**
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {string} text
 */
function sendText(res, status, text) {
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(`${text}\n`);
}

/**
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @returns {Promise<void>}
 */
async function handle(req, res) {
  if (req.method !== 'GET' && req.method !== 'HEAD') return sendText(res, 405, 'method not allowed');
  const url = new URL(req.url ?? '/', 'http://localhost');
  const path = resolvePath(url.pathname);
  if (path === null) return sendText(res, 400, 'bad path');
  const info = await stat(path).catch(() => null);
  if (info === null || !info.isFile()) return sendText(res, 404, 'not found');
  res.writeHead(200, {
    ...(url.searchParams.get('embed') === '1' ? EMBED_HEADERS : SECURITY_HEADERS),
    // The <prenet-calculator> element (dist/embed.js) fetches ORT's wasm and the models from assets/
    // on pages of other sites; these files are public and hashed, so any origin may read them.
    ...(relativeToRoot(path).startsWith('assets/') ? { 'Access-Control-Allow-Origin': '*' } : {}),
    'Content-Type': MIME[extname(path).toLowerCase()] ?? 'application/octet-stream',
    'Content-Length': info.size,
    'Cache-Control': 'no-cache',
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  createReadStream(path).pipe(res);
}

/**
 * @param {import('node:http').Server} server
 * @param {number} port
 * @returns {Promise<void>}
 */
function listen(server, port) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

async function main() {
  const info = await stat(join(ROOT, 'index.html')).catch(() => null);
  if (info === null) {
    process.stderr.write(`serve: ${ROOT}index.html is missing (run: npm run build:web)\n`);
    process.exit(1);
  }
  const server = createServer((req, res) => {
    handle(req, res).catch((error) => {
      if (!res.headersSent) sendText(res, 500, 'internal error');
      process.stderr.write(`serve: ${error}\n`);
    });
  });
  const wanted = Number(process.env.PORT || 5173);
  if (!Number.isInteger(wanted) || wanted < 0 || wanted > 65535) {
    process.stderr.write(`serve: PORT must be a port number, got "${process.env.PORT}"\n`);
    process.exit(1);
  }
  try {
    await listen(server, wanted);
  } catch (error) {
    const code = /** @type {NodeJS.ErrnoException} */ (error).code;
    if (code !== 'EADDRINUSE') throw error;
    process.stderr.write(`serve: port ${wanted} is in use; using a free port\n`);
    await listen(server, 0);
  }
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : wanted;
  process.stdout.write(`http://${HOST}:${port}/\n`);
}

await main();
