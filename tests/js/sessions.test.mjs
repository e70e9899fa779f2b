// Learned predictions by session (core/src/api/learned_sessions.cpp): the engine passes each prediction's
// session id from learnedPrepare to learnedFeatures and learnedFinish, so predictions on one engine may be
// in flight together and each gets the numbers it gets alone; one whose models fail releases its session.

import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { createEngine } from '../../web/src/engine.js';
import { loadNodeCore, loadNodeModels } from '../../web/cli/node-engine.mjs';
import { exampleRequest, requireBuiltCore } from './helpers.mjs';

before(requireBuiltCore);

/** @typedef {import('../../web/src/types').PrenetCoreModule} PrenetCoreModule */
/** @typedef {import('../../web/src/types').ModelRunner} ModelRunner */

/**
 * A real core whose learnedPrepare and learnedRelease note the sessions they open and close.
 * @returns {{ load: () => Promise<PrenetCoreModule>, opened: number[], released: number[], core: () => PrenetCoreModule }}
 */
function notingCore() {
  /** @type {number[]} */
  const opened = [];
  /** @type {number[]} */
  const released = [];
  /** @type {PrenetCoreModule | undefined} */
  let real;
  const load = async () => {
    const core = await loadNodeCore();
    real = core;
    const { learnedPrepare, learnedRelease } = core;
    assert.ok(learnedPrepare && learnedRelease, 'the wasm core has no learned sessions');
    /** @type {PrenetCoreModule} */
    const wrapped = Object.create(core);
    wrapped.learnedPrepare = (text) => {
      const answer = learnedPrepare(text);
      const session = JSON.parse(answer).session;
      if (typeof session === 'number') opened.push(session);
      return answer;
    };
    wrapped.learnedRelease = (session) => {
      released.push(session);
      learnedRelease(session);
    };
    return wrapped;
  };
  const core = () => {
    assert.ok(real, 'the core is not loaded yet');
    return real;
  };
  return { load, opened, released, core };
}

test('two learned predictions in flight on one engine get the numbers each gets alone', async () => {
  const first = exampleRequest({ batch_size: 8 });
  const second = { model: { preset: 'gpt2' }, hardware: ['h100-sxm', 'a100-sxm4-80gb'] };
  const alone = createEngine(loadNodeCore, loadNodeModels);
  const firstAlone = await alone.predict(first);
  const secondAlone = await alone.predict(second);
  assert.equal(firstAlone.predictor, 'learned', 'this test needs the learned models (models/artifacts)');

  // No model runs until both sessions are open: the two are surely between prepare and finish together.
  const noted = notingCore();
  /** @type {() => void} */
  let bothOpen = () => {};
  const gate = new Promise((resolve) => {
    bothOpen = () => resolve(undefined);
  });
  /** @returns {Promise<ModelRunner | null>} */
  const loadGatedModels = async () => {
    const runner = await loadNodeModels();
    if (!runner) return null;
    return {
      async run(dataset, features, rows, width) {
        if (noted.opened.length >= 2) bothOpen();
        await gate;
        return runner.run(dataset, features, rows, width);
      },
    };
  };
  const engine = createEngine(noted.load, loadGatedModels);
  const [firstTogether, secondTogether] = await Promise.all([engine.predict(first), engine.predict(second)]);
  assert.equal(noted.opened.length, 2);
  assert.notEqual(noted.opened[0], noted.opened[1]);
  assert.deepEqual(firstTogether, firstAlone);
  assert.deepEqual(secondTogether, secondAlone);
  assert.deepEqual(noted.released, [], 'finished sessions close themselves');
});

test('a prediction whose models fail releases its session, so failures never use up the core', async () => {
  const noted = notingCore();
  const failing = createEngine(noted.load, async () => ({
    run: async () => {
      throw new Error('model run failed');
    },
  }));
  // More failures than the core keeps sessions open (64).
  for (let i = 0; i < 70; i += 1) await assert.rejects(failing.predict(exampleRequest()), /model run failed/);
  assert.equal(noted.opened.length, 70);
  assert.deepEqual(noted.released, noted.opened);
  const { learnedPrepare, learnedFeatures, learnedFinish, learnedRelease } = noted.core();
  assert.ok(learnedPrepare && learnedFeatures && learnedFinish && learnedRelease);
  const prepared = JSON.parse(learnedPrepare(JSON.stringify(exampleRequest())));
  assert.equal(typeof prepared.session, 'number', 'the core still opens sessions');
  learnedRelease(prepared.session);
  // A released (or never opened) session has no rows, and finishing it is an error naming the request.
  assert.equal(learnedFeatures(prepared.session, 0).length, 0);
  const finished = JSON.parse(learnedFinish(prepared.session, []));
  assert.equal(finished.error?.field, 'request');
});
