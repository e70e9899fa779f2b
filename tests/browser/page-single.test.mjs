// The one-file build (dist/prenet-calculator.html) opened from file:// with the network off and
// every http(s) request aborted: the acceptance suite.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT, SINGLE_FILE, singleFileOpener } from './helpers.mjs';
import { pageSuite } from './page-suite.mjs';

const single = singleFileOpener();
pageSuite('the single file from file://, offline', single.open, single.close);

test('its binaries are data blocks that no JS parser reads, and its scripts are small', () => {
  const html = readFileSync(SINGLE_FILE, 'utf8');
  /** @type {{ classes: Array<{ dataset: string; serves?: string[] }> }} */
  const manifest = JSON.parse(readFileSync(join(ROOT, 'models/artifacts/manifest.json'), 'utf8'));
  const served = manifest.classes.filter((c) => (c.serves ?? []).length > 0).map((c) => `model:${c.dataset}`);
  /** @type {Map<string, number>} */
  const blocks = new Map();
  let scriptChars = 0;
  for (const [, attributes = '', body = ''] of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)) {
    const name = /data-prenet-file="([^"]+)"/.exec(attributes)?.[1];
    if (name === undefined) scriptChars += body.length;
    else {
      assert.match(attributes, /type="application\/octet-stream"/, `${name} is not a script`);
      assert.match(body, /^[A-Za-z0-9+/]+=*$/, `${name} is base64`);
      blocks.set(name, body.length);
    }
  }
  assert.deepEqual([...blocks.keys()].sort(), ['core', 'ort', ...served].sort());
  assert.ok((blocks.get('ort') ?? 0) > 4e6, 'ONNX Runtime wasm, gzip + base64');
  // The page's code with the engine's text inside: before, it also held the 5.5 MB of binaries.
  assert.ok(scriptChars < 1e6, `scripts hold ${scriptChars} characters`);
});
