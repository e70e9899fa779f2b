// The learned step stays inside what was measured: no layer of any preset is predicted slower than the
// largest measured / roofline ratio of any kernel class times that layer's roofline work. ViT's patch
// embedding (a 16×16 convolution with stride 16, far outside the convolution data) once came out 20,000
// times its roofline because the conv model extrapolated in the stride; the manifest's free-feature
// ranges and ratio ceiling (docs/PREDICTION.md, "Outside the training data") keep every layer bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { engine, REPO_ROOT, requireBuiltCore } from './helpers.mjs';

/** Per-kernel launch overhead of the roofline (core/include/prenet/roofline.hpp). */
const LAUNCH_MS = 0.005;

const manifest = JSON.parse(readFileSync(`${REPO_ROOT}models/artifacts/manifest.json`, 'utf8'));
/** @type {number} the largest ceiling among the classes that time kernels */
const ceiling = Math.max(
  ...manifest.classes.filter((/** @type {any} */ c) => c.serves.length > 0).map((/** @type {any} */ c) => Math.exp(c.max_log_roofline_ratio)),
);
const presets = readdirSync(`${REPO_ROOT}core/data/presets`).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5));
/** @type {Array<[string, string]>} */
const SETUPS = [['a100-sxm4-80gb', 'bf16'], ['h200', 'bf16'], ['t4', 'fp16'], ['v100-sxm2-16gb', 'fp32']];

test(`every preset layer's learned time ≤ ${ceiling.toFixed(0)} × its roofline work (${presets.length} presets × ${SETUPS.length} setups)`, async () => {
  requireBuiltCore();
  assert.ok(Number.isFinite(ceiling) && ceiling >= 1, 'manifest classes carry max_log_roofline_ratio');
  const over = [];
  for (const preset of presets) {
    for (const [hardware, precision] of SETUPS) {
      const response = /** @type {any} */ (await engine.predict({
        model: { preset }, training: { batch_size: 32, precision: /** @type {any} */ (precision), optimizer: 'adam' }, hardware: [hardware],
      }));
      assert.equal(response.predictor, 'learned');
      const per = response.results[0].layers;
      for (const layer of response.layers) {
        const i = layer.timing;
        const learned = per.forward_ms[i] + per.backward_ms[i] + per.optimizer_ms[i];
        // A layer's roofline time is at most its compute-bound plus memory-bound time plus its launches.
        const bound = ceiling * (per.compute_ms[i] + per.memory_ms[i] + LAUNCH_MS * layer.kernels);
        if (learned > bound) over.push(`${preset} on ${hardware}: ${layer.name} ${learned.toFixed(3)} ms > ${bound.toFixed(3)} ms`);
      }
    }
  }
  assert.deepEqual(over, []);
});
