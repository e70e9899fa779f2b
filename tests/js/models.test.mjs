// The learned predictors as the page will run them: ONNX Runtime (the package the page uses, its Node
// build here) on the exported files must reproduce the trainer's own predictions, and the manifest must
// describe the files exactly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-web';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
ort.env.wasm.numThreads = 1;

/** Folders holding a trained set: the shipped artifacts and, when present, quick runs (CTest leaves one). */
const folders = [
  join(root, 'models', 'artifacts'),
  join(root, 'build', 'quick-train'),
  join(root, 'build', 'mono-train'),
  join(root, 'build', 'native', 'tests', 'models', 'determinism', 'a'),
  join(root, 'build', 'native', 'tests', 'models', 'determinism-unconstrained', 'a'),
].filter((dir) =>
  existsSync(join(dir, 'manifest.json')),
);

test('a trained model set exists', () => {
  assert.ok(folders.length > 0, 'no models/artifacts/manifest.json: run npm run train');
});

for (const dir of folders) {
  /** @type {{schema_version: number, version: string, data_hash: string, quick: boolean,
   *   roofline: Record<string, number>, classes: Array<{dataset: string, model: string, feature_set: string,
   *   target: string, monotone_in_size?: boolean, monotone_features?: number[], input: string, output: string, features: string[], training_rows: number, gpus: string[],
   *   file: string, size_bytes: number, serves: string[], metrics: {random_split_test: {mdape_pct: number}}}>}} */
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  const parity = JSON.parse(readFileSync(join(dir, 'parity.json'), 'utf8'));
  const label = dir.slice(root.length + 1);

  test(`${label}: manifest schema`, () => {
    assert.equal(manifest.schema_version, 1);
    assert.match(manifest.version, /^\d+\.\d+\.\d+$/);
    assert.match(manifest.data_hash, /^fnv1a64:[0-9a-f]{16}$/);
    assert.equal(typeof manifest.quick, 'boolean');
    for (const key of ['matmul_efficiency', 'memory_efficiency', 'launch_overhead_ms', 'tile']) {
      assert.ok((manifest.roofline[key] ?? 0) > 0, `roofline.${key}`);
    }
    assert.ok(Array.isArray(manifest.classes) && manifest.classes.length >= 5);
    const served = new Set();
    for (const c of manifest.classes) {
      assert.match(c.dataset, /^[a-z_]+$/);
      assert.ok(['linear', 'gbdt', 'random_forest', 'mlp', 'mono_mlp'].includes(c.model), `${c.dataset}.model`);
      // Ratio models read the roofline set; the monotone MLP reads the monotone set and predicts log(time).
      if (c.model === 'mono_mlp') {
        assert.equal(c.feature_set, 'monotone');
        assert.equal(c.target, 'log(time_ms)');
        assert.equal(c.monotone_in_size, true);
        assert.equal(c.monotone_features?.length, c.features.length);
      } else {
        assert.equal(c.feature_set, 'roofline');
        assert.equal(c.target, 'log(time_ms / roofline_ms)');
        assert.notEqual(c.monotone_in_size, true, `${c.dataset}: ${c.model} cannot promise monotonicity`);
      }
      assert.equal(c.input, 'features');
      assert.equal(c.output, 'y');
      assert.ok(c.features.length > 5 && c.features.every((f) => typeof f === 'string'));
      assert.equal(new Set(c.features).size, c.features.length, `${c.dataset}: duplicate feature names`);
      assert.ok(c.training_rows > 0 && c.gpus.length > 0);
      assert.equal(statSync(join(dir, c.file)).size, c.size_bytes, `${c.file} size`);
      assert.ok(c.size_bytes <= 1024 * 1024, `${c.file} is ${c.size_bytes} bytes; the page budget is 1 MiB per model`);
      assert.ok(Number.isFinite(c.metrics.random_split_test.mdape_pct));
      for (const k of c.serves) served.add(k);
    }
    const total = manifest.classes.reduce((sum, c) => sum + c.size_bytes, 0);
    assert.ok(total <= 3 * 1024 * 1024, `models total ${total} bytes; the page budget is 3 MiB`);
    for (const k of ['gemm', 'bmm', 'conv', 'elementwise', 'normalization', 'softmax', 'recurrent']) {
      assert.ok(served.has(k), `no model serves kernel class ${k}`);
    }
  });

  for (const c of manifest.classes) {
    test(`${label}: ${c.dataset} (${c.model}) in ONNX Runtime matches the trainer within 1e-4`, async () => {
      const session = await ort.InferenceSession.create(readFileSync(join(dir, c.file)));
      /** @type {{features: number[], y: number}[]} */
      const rows = parity[c.dataset];
      assert.ok(rows.length > 0, 'no parity rows');
      const width = c.features.length;
      const data = new Float32Array(rows.length * width);
      rows.forEach((r, i) => {
        assert.equal(r.features.length, width);
        data.set(r.features, i * width);
      });
      const out = await session.run({ features: new ort.Tensor('float32', data, [rows.length, width]) });
      assert.ok(out.y, 'the model has no output named y');
      const y = /** @type {Float32Array} */ (out.y.data);
      assert.equal(y.length, rows.length);
      rows.forEach((r, i) => {
        // Outputs are log time ratios; compare the predicted times they imply.
        const relative = Math.abs(Math.exp(Number(y[i]) - r.y) - 1);
        assert.ok(relative <= 1e-4, `row ${i}: onnx ${y[i]} vs trainer ${r.y} (relative ${relative})`);
      });
    });
  }

  // The exported file itself, probed: raising any size feature of a parity row (by small and large
  // steps) never lowers the output of a model that promises monotonicity.
  for (const c of manifest.classes.filter((k) => k.monotone_in_size === true)) {
    test(`${label}: ${c.dataset} (${c.model}) output never falls as a size feature rises`, async () => {
      const session = await ort.InferenceSession.create(readFileSync(join(dir, c.file)));
      /** @type {{features: number[], y: number}[]} */
      const rows = parity[c.dataset];
      const width = c.features.length;
      const flags = /** @type {number[]} */ (c.monotone_features);
      assert.ok(flags.some((f) => f === 1), 'no size features flagged');
      /** @type {number[][]} */
      const probes = [];
      for (const r of rows) {
        for (let f = 0; f < width; f += 1) {
          if (flags[f] !== 1) continue;
          for (const step of [0, 1e-3, 0.25, 1, 4, 16]) probes.push(r.features.map((v, j) => (j === f ? v + step : v)));
        }
      }
      const data = new Float32Array(probes.length * width);
      probes.forEach((p, i) => data.set(p, i * width));
      const out = await session.run({ features: new ort.Tensor('float32', data, [probes.length, width]) });
      assert.ok(out.y, 'the model has no output named y');
      const y = /** @type {Float32Array} */ (out.y.data);
      let falls = 0;
      for (let i = 0; i < probes.length; i += 6) {
        for (let s = 1; s < 6; s += 1) if (Number(y[i + s]) < Number(y[i + s - 1])) falls += 1;
      }
      assert.equal(falls, 0, `${falls} of ${(probes.length / 6) * 5} steps lowered the output`);
    });
  }
}
