// The host's floor on a pass (docs/PREDICTION.md, "Launch-bound steps") through the real engine and learned
// models: a launch-bound step says so, its 80% band never goes below the host's issue time, and CUDA graphs
// (training.cuda_graphs) remove the floor.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { engine, requireBuiltCore } from './helpers.mjs';

/** @param {boolean} graphs @returns {Promise<any>} BERT-Base on one 32-token sequence on an H100 */
async function tiny(graphs) {
  const response = /** @type {any} */ (await engine.predict(/** @type {any} */ ({
    model: { preset: 'bert-base' },
    training: { batch_size: 1, seq_len: 32, precision: 'bf16', ...(graphs ? { cuda_graphs: true } : {}) },
    hardware: ['h100-sxm'],
    options: { per_layer: false },
  })));
  return response;
}

test('a launch-bound step: the passes are the host issue time, the band starts there, graphs remove it', async () => {
  requireBuiltCore();
  const eager = await tiny(false);
  const graphs = await tiny(true);
  const e = eager.results[0];
  const g = graphs.results[0];
  assert.equal(e.bottleneck, 'overhead');
  assert.equal(e.forward_ms, e.host_issue_ms.forward);
  assert.equal(e.backward_ms, e.host_issue_ms.backward);
  assert.ok(e.host_issue_ms.forward > 0 && e.host_issue_ms.backward > 0);
  if (eager.predictor === 'learned') {
    assert.ok(e.step_ms_interval[0] >= e.host_issue_ms.forward + e.host_issue_ms.backward,
      `band ${e.step_ms_interval} below the host's ${e.host_issue_ms.forward + e.host_issue_ms.backward} ms`);
  }
  assert.deepEqual(g.host_issue_ms, { forward: 0, backward: 0 });
  assert.ok(g.step_ms < e.step_ms, `graphs ${g.step_ms} ms, eager ${e.step_ms} ms`);
  assert.equal(graphs.training.cuda_graphs, true);
});
