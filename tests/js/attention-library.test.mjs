// Which fused attention kernel a request times (docs/PREDICTION.md, "Fused attention"; docs/API.md,
// training.attention), through the real engine and learned models: `flash` under PyTorch's kernels is the
// library the catalogue names for the part (cuDNN's on H100-class parts since PyTorch 2.11), `flash2` is
// FlashAttention-2 everywhere, and where neither is measured both keep the same learned time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { engine, requireBuiltCore } from './helpers.mjs';

/**
 * @param {string} attention @param {string} hardware @param {string} [kernels]
 * @returns {Promise<any>} Llama 3.2 1B, two 2,048-token sequences in BF16, per-layer times on; PyTorch's kernels
 *   compiled, so that its rotary embedding is one fused kernel as Megatron's is and only the attention core differs
 */
async function llama(attention, hardware, kernels = 'pytorch') {
  return engine.predict(/** @type {any} */ ({
    model: { preset: 'llama-3.2-1b' },
    training: { batch_size: 2, seq_len: 2048, precision: 'bf16', optimizer: 'adamw', attention, kernels,
      ...(kernels === 'pytorch' ? { compile: true } : {}) },
    hardware: [hardware],
  }));
}

/** @param {any} response @returns {number} the forward time of the first attention layer's column */
function firstAttentionForward(response) {
  const r = response.results[0];
  const i = response.layers.findIndex((/** @type {any} */ l) => l.type === 'attention');
  assert.ok(i >= 0, 'an attention layer');
  return r.layers.forward_ms[response.layers[i].timing];
}

test('flash on an H200 under PyTorch kernels times cuDNN\'s kernel, as Megatron\'s do; flash2 does not', async () => {
  requireBuiltCore();
  const sdpa = await llama('flash', 'h200');
  if (sdpa.predictor !== 'learned') return;  // the tables are read by the learned path only
  const megatron = await llama('flash', 'h200', 'megatron');
  const fa2 = await llama('flash2', 'h200');
  assert.equal(firstAttentionForward(sdpa), firstAttentionForward(megatron));
  assert.notEqual(firstAttentionForward(fa2), firstAttentionForward(sdpa));
  assert.equal(fa2.training.attention, 'flash2');
  // The fused pass keeps no score matrices either way: the same activation memory.
  assert.equal(fa2.results[0].memory_gb, sdpa.results[0].memory_gb);
});

test('on a part without fused attention timings flash and flash2 are the same prediction', async () => {
  requireBuiltCore();
  const flash = await llama('flash', 'a100-sxm4-80gb');
  const flash2 = await llama('flash2', 'a100-sxm4-80gb');
  assert.equal(flash.results[0].step_ms, flash2.results[0].step_ms);
  assert.equal(flash.results[0].memory_gb, flash2.results[0].memory_gb);
});
