// Golden responses: every request of tests/golden/corpus.json.gz (what the benchmarks, the case manifest,
// the bad-input table and the property generators ask; tests/golden/record.mjs) is sent again through the
// real engine, and a hash of the core's raw answer text must equal the one in tests/golden/hashes.json.
// A restructuring must keep every response byte for byte; a change that means to change responses says
// so by refreshing the hashes, with the command in its commit:
//
//   PRENET_GOLDEN_UPDATE=1 node --test tests/js/golden.test.mjs
//
// The catalogue is checked key by key: keys it had keep their text, and a new key is allowed (a table the
// catalogue starts to publish).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { before, test } from 'node:test';
import { createEngine } from '../../web/src/engine.js';
import { loadNodeCore, loadNodeModels } from '../../web/cli/node-engine.mjs';
import { requireBuiltCore } from './helpers.mjs';

before(requireBuiltCore);

const CORPUS = new URL('../golden/corpus.json.gz', import.meta.url);
const HASHES = new URL('../golden/hashes.json', import.meta.url);
const UPDATE = process.env.PRENET_GOLDEN_UPDATE === '1';

/** @typedef {{source: string, kind: 'predict' | 'roofline' | 'plan', text: string}} Entry */

/** @param {string} text */
const sha = (text) => createHash('sha256').update(text).digest('hex').slice(0, 20);

/**
 * The engine of web/src/engine.js over a core whose answering calls note their raw text, so what is
 * hashed is what the core wrote, not a re-serialisation of it.
 */
function recordingEngine() {
  /** @type {string[]} */
  const answers = [];
  const load = async () => {
    const core = /** @type {any} */ (await loadNodeCore());
    const wrapped = Object.create(core);
    for (const name of ['predict', 'plan', 'learnedPrepare', 'learnedFinish', 'catalog']) {
      const fn = core[name];
      if (typeof fn !== 'function') continue;
      wrapped[name] = (/** @type {unknown[]} */ ...args) => {
        const text = fn.apply(core, args);
        answers.push(text);
        return text;
      };
    }
    return wrapped;
  };
  return { engine: createEngine(load, loadNodeModels), answers };
}

/** @param {ReturnType<typeof recordingEngine>} rec @param {Entry} entry @returns {Promise<string>} */
async function answer(rec, entry) {
  rec.answers.length = 0;
  const call = { predict: rec.engine.predict, roofline: rec.engine.predictRoofline, plan: rec.engine.plan }[entry.kind];
  try {
    await call(entry.text);
  } catch (error) {
    if (rec.answers.length === 0) return `threw: ${error instanceof Error ? error.message : String(error)}`;
  }
  return rec.answers.at(-1) ?? '';
}

test('every golden request gets the recorded response, byte for byte', { timeout: 30 * 60 * 1000 }, async () => {
  assert.ok(existsSync(CORPUS), 'tests/golden/corpus.json.gz is missing (node tests/golden/record.mjs)');
  /** @type {Entry[]} */
  const corpus = JSON.parse(gunzipSync(readFileSync(CORPUS)).toString('utf8'));
  /** @type {{responses: string[], catalog: Record<string, string>}} */
  const recorded = existsSync(HASHES) ? JSON.parse(readFileSync(HASHES, 'utf8')) : { responses: [], catalog: {} };
  const rec = recordingEngine();

  /** @type {string[]} */
  const responses = [];
  for (const entry of corpus) responses.push(sha(await answer(rec, entry)));
  /** @type {Record<string, string>} */
  const catalog = {};
  for (const [key, value] of Object.entries(await rec.engine.catalog())) catalog[key] = sha(JSON.stringify(value));

  if (UPDATE) {
    writeFileSync(HASHES, `${JSON.stringify({ responses, catalog }, null, 1)}\n`);
    return;
  }
  assert.equal(recorded.responses.length, corpus.length, 'hashes.json does not match the corpus (PRENET_GOLDEN_UPDATE=1)');
  const changed = corpus.flatMap((entry, i) => (responses[i] === recorded.responses[i] ? [] : [{ i, entry }]));
  const shown = changed
    .slice(0, 8)
    .map(({ i, entry }) => `  #${i} ${entry.kind} from ${entry.source}: ${entry.text.slice(0, 160)}`)
    .join('\n');
  assert.equal(changed.length, 0, `${changed.length} of ${corpus.length} responses changed:\n${shown}`);
  for (const [key, hash] of Object.entries(recorded.catalog)) {
    assert.equal(catalog[key], hash, `catalog.${key} changed`);
  }
});
