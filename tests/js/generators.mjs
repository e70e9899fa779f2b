// Seeded generators of random valid requests, shared by the property tests (properties.test.mjs) and the
// golden-response corpus (tests/golden/record.mjs).

/** xorshift32: small, deterministic. @param {number} seed */
export function rng(seed) {
  let x = seed >>> 0 || 1;
  const next = () => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return x / 2 ** 32;
  };
  return {
    /** @param {number} lo @param {number} hi */
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    /** @param {number} lo @param {number} hi */
    real: (lo, hi) => lo + next() * (hi - lo),
    /** @template T @param {T[]} a @returns {T} */
    pick: (a) => /** @type {any} */ (a[Math.floor(next() * a.length)]),
  };
}

/** A random small layer list: a dense, attention, LSTM or conv stack. @param {ReturnType<typeof rng>} r */
export function randomModel(r) {
  const kind = r.pick(['vector', 'sequence', 'tokens', 'image']);
  const heads = r.int(1, 8);
  const width = heads * r.int(1, 32);
  const activation = r.pick(['relu', 'gelu', 'tanh', 'silu']);
  /** @type {any[]} */ const layers = [];
  /** @type {any[]} */ let body;
  /** @type {any} */ let input;
  if (kind === 'vector') {
    input = { kind, features: r.int(1, 256) };
    body = [{ type: 'dense', units: width, activation }];
  } else if (kind === 'image') {
    input = { kind, channels: r.int(1, 4), image_size: r.int(4, 64) };
    body = [{ type: 'conv2d', filters: r.int(1, 64), kernel_size: r.pick([1, 3, 5]), padding: 'same', activation }, { type: 'batchnorm' }];
  } else {
    const seq_len = r.int(1, 256);
    if (kind === 'tokens') {
      input = { kind, seq_len };
      layers.push({ type: 'embedding', vocab_size: r.int(2, 5000), dim: width });
    } else {
      input = { kind, seq_len, features: r.int(1, 256) };
      layers.push({ type: 'dense', units: width });
    }
    const block = r.pick(['dense', 'attention', 'lstm']);
    if (block === 'attention') {
      body = [{ type: 'layernorm' }, { type: 'attention', num_heads: heads }, { type: 'dense', units: width, activation }];
    } else if (block === 'lstm') {
      body = [{ type: 'lstm', hidden_size: r.int(1, 128) }, { type: 'dense', units: width }];
    } else {
      body = [{ type: 'dense', units: width, activation }];
    }
  }
  layers.push({ type: 'repeat', count: r.int(1, 6), name: 'block', layers: body });
  if (kind === 'image') layers.push({ type: 'global_avg_pool' });
  layers.push({ type: 'dense', units: r.int(2, 100) }, { type: 'cross_entropy' });
  return { name: `random-${kind}`, input, layers };
}

/** @param {ReturnType<typeof rng>} r @param {string[]} presets @param {any[]} hardware */
export function randomRequest(r, presets, hardware) {
  const precision = r.pick(['fp32', 'fp32', 'tf32', 'fp16', 'bf16']);
  const ids = hardware.filter((h) => h.peak_tflops && precision in h.peak_tflops).map((h) => h.id);
  /** @type {any[]} */ const hw = [r.pick(ids)];
  if (r.int(0, 1)) {
    /** @type {Record<string, number>} */ const peaks = { fp32: r.real(1, 100) };
    for (const p of ['tf32', 'fp16', 'bf16']) if (p === precision || r.int(0, 1)) peaks[p] = r.real(5, 2000);
    hw.push({ name: 'custom', peak_tflops: peaks, memory_bandwidth_gbs: r.real(100, 8000), memory_gb: r.real(8, 192) });
  }
  const model = r.int(0, 2) === 0 ? { preset: r.pick(presets) } : randomModel(r);
  // Fused attention on the random stacks (a preset may be Transformer-XL, which refuses it).
  const attention = 'preset' in model ? 'eager' : r.pick(['eager', 'flash']);
  return {
    model,
    training: {
      batch_size: 1,
      precision,
      attention,
      optimizer: r.pick(['none', 'sgd', 'momentum', 'adam', 'adamw', 'adagrad', 'adadelta', 'rmsprop']),
      dataset_size: r.int(1, 1000000),
      epochs: r.int(0, 1) ? r.int(1, 10) : Number(r.real(0.01, 5).toFixed(3)),
    },
    hardware: hw,
    options: { per_layer: false },
  };
}

const TRANSFORMER_PRESETS = ['gpt2', 'bert-base', 'bert-large', 'gpt2-large', 'llama-2-7b', 'opt-1.3b'];

/**
 * A random multi-GPU request: a transformer preset or random stack split over data, tensor and pipeline
 * ranks, with ZeRO, recomputation and sequence parallelism drawn; it may not fit (memory advice) or be
 * refused (an error naming a parallel field), both of which a corpus of responses wants.
 * @param {ReturnType<typeof rng>} r @param {string[]} presets @param {any[]} hardware
 */
export function randomParallelRequest(r, presets, hardware) {
  const known = presets.filter((p) => TRANSFORMER_PRESETS.includes(p));
  const base = /** @type {any} */ (randomRequest(r, known.length > 0 ? known : presets, hardware));
  const tensor = r.pick([1, 1, 2, 4, 8]);
  const pipeline = r.pick([1, 1, 2, 4]);
  const data = r.pick([1, 2, 4, 16, 64]);
  const microBatch = r.pick([1, 2, 4]);
  const microBatches = r.pick([1, 2, 8]);
  /** @type {any} */
  const parallel = { data, tensor, pipeline, micro_batch_size: microBatch, micro_batches: microBatches };
  if (r.int(0, 1)) parallel.zero_stage = r.int(0, 3);
  if (r.int(0, 2) === 0) parallel.recompute = r.pick(['selective', 'full']);
  if (tensor > 1 && r.int(0, 1)) parallel.sequence_parallel = true;
  if (r.int(0, 3) === 0) parallel.gpus_per_node = r.pick([4, 8, 16]);
  return {
    ...base,
    model: r.int(0, 3) === 0 ? randomModel(r) : { preset: r.pick(known.length > 0 ? known : presets) },
    training: {
      ...base.training,
      batch_size: data * microBatch * microBatches,
      seq_len: r.pick([128, 512, 1024]),
      kernels: r.pick(['pytorch', 'megatron']),
      optimizer_impl: r.pick(['fused', 'foreach']),
    },
    parallel,
    options: { per_layer: r.int(0, 2) === 0 },
  };
}

/**
 * A random plan-mode request (docs/API.md, Plan): a preset on one to three catalogue accelerators with a
 * token or sample budget and a GPU range.
 * @param {ReturnType<typeof rng>} r @param {string[]} presets @param {any[]} hardware
 */
export function randomPlanRequest(r, presets, hardware) {
  const precision = r.pick(['fp32', 'bf16', 'fp16']);
  const ids = hardware.filter((h) => h.peak_tflops && precision in h.peak_tflops).map((h) => h.id);
  const chosen = [...new Set([r.pick(ids), r.pick(ids), r.pick(ids)].slice(0, r.int(1, 3)))];
  const maxGpus = r.pick([1, 8, 64, 512]);
  /** @type {any} */
  const plan = { max_gpus: maxGpus, top: r.int(1, 10) };
  if (r.int(0, 1)) plan.tokens = r.pick([1e9, 1e11, 2e12]);
  else plan.samples = r.pick([1e4, 1e6]);
  if (r.int(0, 3) === 0) plan.min_gpus = Math.max(1, maxGpus / 8);
  return {
    model: { preset: r.pick(presets) },
    training: {
      batch_size: r.pick([8, 64, 256, 1024]),
      seq_len: r.pick([512, 1024, 2048]),
      precision,
      optimizer: r.pick(['adam', 'adamw', 'sgd']),
      attention: r.pick(['eager', 'flash']),
    },
    hardware: chosen,
    plan,
  };
}
