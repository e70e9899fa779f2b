// The fine-tuning benchmark's data and requests (web/bench/finetune.mjs, models/data/finetune/measurements.json):
// every row cites a source, names a catalogue accelerator and a model the core reads, and becomes a request
// the core either predicts or refuses only for a field of issue 19 it does not take yet. The errors
// themselves are what `npm run bench:finetune` reports, not what this tests. No network.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BASELINE, baseline, catalogue, finetuneRequest, finetuneRows } from '../../web/bench/finetune.mjs';
import { engine } from '../../web/cli/node-engine.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const rows = finetuneRows();
const hardware = catalogue();

/** Issue 19's request fields (COMMON19 contract): the only ones the core may still refuse. */
const CONTRACT_TRAINING = ['finetune', 'master_weights', 'optimizer_in_backward', 'activation_offload', 'loss', 'compile', 'offload'];
const CONTRACT_OPTIMIZERS = ['adamw_8bit', 'paged_adamw_8bit', 'paged_adamw', 'adafactor', 'lion', 'muon'];

describe('measurements.json schema', () => {
  test('has rows with unique ids', () => {
    assert.ok(rows.length >= 20, `${rows.length} rows`);
    assert.equal(new Set(rows.map((r) => r.id)).size, rows.length);
  });

  for (const row of rows) {
    test(`${row.id}: source, model, hardware, setup, measurement`, () => {
      assert.match(row.source.url, /^https:\/\//);
      assert.ok(row.source.commit_or_date && row.source.where, 'source needs commit_or_date and where');
      if (row.model.preset) assert.ok(existsSync(`${ROOT}core/data/presets/${row.model.preset}.json`), row.model.preset);
      else assert.ok(row.model.hf_config_file && existsSync(`${ROOT}${row.model.hf_config_file}`), 'preset or hf_config_file');
      assert.ok(hardware.has(row.hardware), `hardware ${row.hardware} not in core/data/hardware.json`);
      assert.ok(['full', 'lora', 'qlora', 'freeze'].includes(row.method));
      assert.equal(row.finetune.method, row.method);
      if (row.method === 'lora' || row.method === 'qlora') {
        assert.ok(Number.isInteger(row.finetune.rank) && /** @type {number} */ (row.finetune.rank) > 0);
        assert.ok(/** @type {number} */ (row.finetune.alpha) > 0);
        assert.ok(Array.isArray(row.finetune.targets) || row.finetune.targets === 'all-linear');
        assert.equal(row.finetune.base_precision, row.method === 'qlora' ? 'nf4' : 'bf16');
      }
      assert.ok(Number.isInteger(row.gpus) && row.gpus >= 1);
      assert.ok(['none', 'selective', 'full'].includes(row.recompute));
      assert.ok(Number.isInteger(row.training.batch_size) && Number.isInteger(row.training.seq_len));
      assert.equal(/** @type {number} */ (row.training.batch_size) % row.gpus, 0, 'global batch splits over the GPUs');
      const m = row.measured;
      assert.ok(m.peak_memory_gb != null || m.tokens_per_s != null || m.step_s != null, 'measures something');
      if (m.peak_memory_gb != null) assert.ok(m.peak_memory_gb > 0 && m.peak_memory_gb <= /** @type {any} */ (hardware.get(row.hardware)).memory_gb * 1.1);
      if (m.tokens_per_s != null) assert.ok(['per_gpu', 'total'].includes(/** @type {string} */ (m.tokens_per_s_scope)));
    });
  }
});

describe('requests', () => {
  test('a single-GPU row without checkpointing sends no parallel section; a multi-GPU FSDP row sends zero_stage 3', () => {
    const single = rows.find((r) => r.gpus === 1 && r.recompute === 'none');
    assert.ok(single);
    assert.equal(finetuneRequest(single).parallel, undefined);
    const fsdp = rows.find((r) => r.gpus > 1 && r.training.fsdp === true);
    assert.ok(fsdp);
    const p = /** @type {any} */ (finetuneRequest(fsdp)).parallel;
    assert.equal(p.gpus, fsdp.gpus);
    assert.equal(p.fsdp, true);
    assert.equal(/** @type {any} */ (finetuneRequest(fsdp)).training.fsdp, undefined);
  });

  test('LoRA rows carry training.finetune; full rows send none (today\'s default)', () => {
    for (const row of rows) {
      const t = /** @type {any} */ (finetuneRequest(row)).training;
      if (row.method === 'full') assert.equal(t.finetune, undefined);
      else assert.deepEqual(t.finetune, row.finetune);
    }
  });

  test('the baseline follows its stated rules', () => {
    const row = rows.find((r) => r.method === 'full' && r.gpus === 1);
    assert.ok(row);
    const hw = /** @type {any} */ (hardware.get(row.hardware));
    const b = baseline(row, 1e9, hw);
    assert.equal(b.memory_gb, BASELINE.full_bytes);
    assert.ok(Math.abs(b.tokens_per_s - (0.4 * hw.peak_tflops.bf16 * 1e12) / 6e9) < 1e-6);
  });

  for (const row of rows) {
    test(`${row.id}: the core predicts it, or refuses only a field of issue 19`, async () => {
      const request = /** @type {any} */ (finetuneRequest(row));
      try {
        const response = /** @type {any} */ (await engine.predict(request));
        assert.ok(response.results[0].memory_gb > 0 && response.results[0].step_ms > 0);
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        const contract = CONTRACT_TRAINING.some((f) => message.startsWith(`training.${f}`)) ||
          (message.startsWith('training.optimizer') && CONTRACT_OPTIMIZERS.some((o) => message.includes(o)));
        assert.ok(contract, `refused for something outside issue 19's contract: ${message}`);
        // Without issue 19's fields the same model, hardware and layout must be accepted.
        for (const f of CONTRACT_TRAINING) delete request.training[f];
        if (CONTRACT_OPTIMIZERS.includes(request.training.optimizer)) request.training.optimizer = 'adamw';
        const response = /** @type {any} */ (await engine.predict(request));
        assert.ok(response.results[0].memory_gb > 0);
      }
    });
  }
});

test('SOURCES.md cites every source URL of the measurements', () => {
  const sources = readFileSync(`${ROOT}models/data/SOURCES.md`, 'utf8');
  for (const url of new Set(rows.map((r) => r.source.url))) assert.ok(sources.includes(url), url);
});
