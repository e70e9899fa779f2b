// Turns the rows of ../shared/data/validation into benchmark cases: what was measured, on which
// catalogue accelerator, and the request that predicts it (or why no request can yet).
//
// Pure functions only (no file or engine access), so tests/js/accuracy-bench.test.mjs can check every
// mapping rule on hand-written rows.

import { DLE_DEVICES, JUSTUS_DEVICES, NEUSIGHT_DEVICES, deviceId } from '../../../models/data-tools/gpus.mjs';

/**
 * @typedef {import('../../src/types').PredictRequest} PredictRequest
 * @typedef {import('../../src/types').Precision} Precision
 * @typedef {import('../../src/types').Optimizer} Optimizer
 * @typedef {import('../../src/types').JsonObject} JsonObject
 */

/**
 * @typedef {'neusight' | 'neusight-fusion' | 'dle' | 'justus'} SourceId
 * @typedef {'step_ms' | 'forward_ms' | 'throughput'} Metric
 */

/**
 * How a supported row is predicted. The request is for one micro-batch with the row's optimizer.
 * Throughput rows divide `samplesPerStep` by the optimizer-step time; with `accumulation` > 1 that time
 * is accumulation × (forward + backward) + one optimizer update, the update being the difference of
 * the step times with the row's optimizer and with optimizer "none" (a second request).
 * @typedef {object} Plan
 * @property {PredictRequest} request
 * @property {number} samplesPerStep samples per optimizer step (throughput rows; batch otherwise)
 * @property {number} accumulation micro-batches per optimizer step (1 = no accumulation)
 */

/**
 * @typedef {object} Case
 * @property {string} row label, unique over a run
 * @property {SourceId} source
 * @property {string} group subgroup within the source (train, inf, fp32, amp, fw, sgd, adam)
 * @property {string} gpu the device as the data names it
 * @property {string | null} hardware catalogue id; null when the row is not on one catalogue device
 * @property {Metric} metric what `measured` is
 * @property {number} measured
 * @property {string} unit
 * @property {Plan | null} plan null: not predicted, see `skip`
 * @property {string} [skip] why the row is not predicted
 * @property {{forward_ms: number, backward_ms: number}} [measuredPhases] NeuSight train rows: the split
 * @property {string[]} notes mapping assumptions a reader should know
 * @property {string} origin file (and line) of the row
 */

/** The skip reason multi-GPU rows carried before the core predicted them (old result files still read). */
export const MULTI_GPU_SKIP = 'not supported yet (issue 7): multi-GPU';

/**
 * What NeuSight's multi-GPU labels time (sitar-lab/NeuSight, its Megatron-LM profiling script `prof()`,
 * read with the code-search tool): Hugging Face Accelerate with `MegatronLMPlugin`, 4 processes, one
 * parallelism per run. The label's batch is `global_batch_size`; each data-parallel rank runs
 * `global_batch_size / dp / num_micro_batches` samples per micro-batch; `ppN_M` is N pipeline stages
 * and M micro-batches. The timed region (CUDA events around `model(**batch)` and
 * `accelerator.backward(loss)`) is Accelerate's `MegatronEngine.forward`, i.e. Megatron's `train_step`:
 * forward and backward over the pipeline schedule, the gradient all-reduce and the optimizer update
 * (Megatron's default Adam with decoupled weight decay, in FP32: Accelerate's default mixed_precision
 * "no"). So these rows are whole optimizer steps, unlike the single-GPU NeuSight labels.
 */
export const NEUSIGHT_PARALLEL_NOTE =
  'Megatron-LM train_step via Accelerate: forward + backward + gradient all-reduce + Adam update, global batch split over the data-parallel ranks';

// ------------------------------------------------------------------------------------------ GPUs

/**
 * @param {string} name the device as the file names it: a NeuSight label folder (the device name with
 *   underscores for spaces), or a "DLE:" / "Justus:" prefix and the name in that source
 * @returns {string | undefined} catalogue id, from the one GPU-name map (models/data-tools/gpus.mjs)
 */
function catalogIdOf(name) {
  if (name.startsWith('DLE:')) return deviceId(DLE_DEVICES, name.slice('DLE:'.length));
  if (name.startsWith('Justus:')) return deviceId(JUSTUS_DEVICES, name.slice('Justus:'.length));
  return deviceId(NEUSIGHT_DEVICES, name.replaceAll('_', ' '));
}

/**
 * @param {string} name the device as the file names it (DLE and Justus names carry a "DLE:"/"Justus:" prefix)
 * @param {string} where file, for the error
 * @returns {string} catalogue id
 */
export function gpuToCatalogId(name, where) {
  const id = catalogIdOf(name);
  if (id === undefined) {
    throw new Error(`${where}: unknown GPU "${name}"; map it to a catalogue id in models/data-tools/gpus.mjs`);
  }
  return id;
}

// ------------------------------------------------------------------------------------------ NeuSight

/**
 * @typedef {object} NeusightConfig
 * @property {string} model file stem under validation/models
 * @property {'train' | 'inf'} mode
 * @property {number} seq
 * @property {number} batch
 * @property {{kind: 'dp' | 'tp' | 'pp', degree: number, micro?: number} | null} parallel
 * @property {boolean} fusion
 */

const CONFIG_RE = /^([A-Za-z0-9_.]+)-(train|inf)-(\d+)-(\d+)((?:-(?:dp\d+|tp\d+|pp\d+_\d+|fusion))*)$/;

/**
 * Parses NeuSight's `model-train|inf-seq-batch[-dpN|-tpN|-ppN_M][-fusion]`.
 * @param {string} config
 * @returns {NeusightConfig}
 */
export function parseNeusightConfig(config) {
  const match = CONFIG_RE.exec(config);
  if (!match) throw new Error(`NeuSight config "${config}" does not read model-train|inf-seq-batch[-dpN|-tpN|-ppN_M][-fusion]`);
  const [, model = '', mode = '', seq = '', batch = '', suffix = ''] = match;
  /** @type {NeusightConfig} */
  const parsed = { model, mode: mode === 'train' ? 'train' : 'inf', seq: Number(seq), batch: Number(batch), parallel: null, fusion: false };
  for (const part of suffix.split('-').filter(Boolean)) {
    if (part === 'fusion') {
      parsed.fusion = true;
      continue;
    }
    if (parsed.parallel) throw new Error(`NeuSight config "${config}": more than one parallelism suffix`);
    const pp = /^pp(\d+)_(\d+)$/.exec(part);
    if (pp) parsed.parallel = { kind: 'pp', degree: Number(pp[1]), micro: Number(pp[2]) };
    else parsed.parallel = { kind: part.startsWith('dp') ? 'dp' : 'tp', degree: Number(part.slice(2)) };
  }
  return parsed;
}

/**
 * @param {number} value
 * @param {string} what
 */
function positive(value, what) {
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${what}: expected a positive number, got ${value}`);
  return value;
}

/**
 * The model NeuSight's label script instantiates for a mode (`neusight/Tracing/trace.py`, `get_model` and
 * `measure_e2e`): a BERT config becomes `AutoModelForPreTraining` for training and
 * `AutoModelForSequenceClassification` for inference (the class name is how the request says so); the
 * other models keep their causal-LM / seq2seq class. Inference runs `model.eval()` under `torch.no_grad()`,
 * so every dropout is an identity: the rates are sent as 0.
 * @param {JsonObject} hfConfig validation/models/<model>.json
 * @param {'train' | 'inf'} mode
 * @returns {JsonObject}
 */
export function neusightModelConfig(hfConfig, mode) {
  const config = { ...hfConfig };
  const architectures = Array.isArray(config.architectures) ? config.architectures : [];
  const name = typeof architectures[0] === 'string' ? architectures[0].toLowerCase() : '';
  if (name.includes('bert')) {
    config.architectures = [mode === 'train' ? 'BertForPreTraining' : 'BertForSequenceClassification'];
  }
  if (mode === 'inf') {
    for (const [key, value] of Object.entries(config)) {
      if (typeof value === 'number' && /dropout|pdrop/.test(key)) config[key] = 0;
    }
  }
  return config;
}

/**
 * One row of neusight-labels-dev.csv. `train` labels are forward + backward without the optimizer
 * step (→ optimizer "none", compare step_ms); `inf` labels are forward only (compare forward_ms);
 * strict FP32.
 * @param {Record<string, string>} record
 * @param {(model: string) => JsonObject | undefined} modelConfig the HF config.json of validation/models/<model>.json
 * @param {string} origin
 * @returns {Case}
 */
export function neusightRowToCase(record, modelConfig, origin) {
  const gpu = record.gpu ?? '';
  const config = record.config ?? '';
  const parsed = parseNeusightConfig(config);
  const hardware = gpuToCatalogId(gpu, origin);
  const measured = positive(Number(record.e2e_latency_ms), `${origin} e2e_latency_ms`);
  const metric = parsed.mode === 'train' ? 'step_ms' : 'forward_ms';
  /** @type {Case} */
  const base = {
    row: `${gpu} ${config}`,
    source: parsed.fusion ? 'neusight-fusion' : 'neusight',
    group: parsed.mode,
    gpu,
    hardware,
    metric,
    measured,
    unit: 'ms',
    plan: null,
    notes: [],
    origin,
  };
  const fw = Number(record.fw_latency_ms);
  const bw = Number(record.bwall_latency_ms);
  if (parsed.mode === 'train' && fw > 0 && bw > 0) base.measuredPhases = { forward_ms: fw, backward_ms: bw };
  const modelJson = modelConfig(parsed.model);
  if (!modelJson) return { ...base, skip: `unsupported: no model config validation/models/${parsed.model}.json` };
  if (parsed.fusion) base.notes.push('measured with fused kernels; the request cannot say so');
  const hfConfig = neusightModelConfig(modelJson, parsed.mode);
  if (parsed.parallel) {
    if (parsed.mode !== 'train') throw new Error(`${origin}: NeuSight parallel rows are training runs`);
    const { kind, degree, micro } = parsed.parallel;
    /** @type {NonNullable<PredictRequest['parallel']>} */
    const parallel =
      kind === 'dp'
        ? { data: degree, micro_batches: 1 }
        : kind === 'tp'
          ? { tensor: degree, micro_batches: 1 }
          : { pipeline: degree, micro_batches: micro ?? 1 };
    base.notes.push(NEUSIGHT_PARALLEL_NOTE);
    return {
      ...base,
      group: 'parallel',
      plan: {
        request: {
          model: { hf_config: hfConfig, name: parsed.model },
          training: { batch_size: parsed.batch, seq_len: parsed.seq, precision: 'fp32', optimizer: 'adamw' },
          hardware: [hardware],
          options: { per_layer: false },
          parallel,
        },
        samplesPerStep: parsed.batch,
        accumulation: 1,
      },
    };
  }
  return {
    ...base,
    plan: {
      request: {
        model: { hf_config: hfConfig, name: parsed.model },
        training: { batch_size: parsed.batch, seq_len: parsed.seq, precision: 'fp32', optimizer: 'none' },
        hardware: [hardware],
        options: { per_layer: false },
      },
      samplesPerStep: parsed.batch,
      accumulation: 1,
    },
  };
}

// ------------------------------------------------------------------------------------------ DeepLearningExamples

/** @type {Readonly<Record<string, Precision>>} */
const DLE_PRECISIONS = Object.freeze({ FP32: 'fp32', TF32: 'tf32', AMP: 'fp16' });

/** @type {Readonly<Record<string, string>>} */
const DLE_UNITS = Object.freeze({ 'img/s': 'img/s', 'seq/s': 'seq/s', 'tokens/s': 'tokens/s' });

/**
 * Gradient-accumulation steps of the BERT pre-training table ("Pre-training NVIDIA DGX-1 With 32G",
 * PyTorch/LanguageModeling/BERT/README.md: "Accumulation steps (FP32 and FP16)": 128 and 64 at
 * sequence 128, 512 and 256 at sequence 512), used when the row does not state them.
 * @type {Readonly<Record<number, {fp32: number, fp16: number}>>}
 */
export const BERT_PRETRAIN_ACCUMULATION = Object.freeze({ 128: { fp32: 128, fp16: 64 }, 512: { fp32: 512, fp16: 256 } });

/** DLE's scripts/run_squad.sh fixes `--max_seq_length=384`. */
export const SQUAD_SEQ_LEN = 384;

/**
 * Transformer-XL base (PyTorch/LanguageModeling/Transformer-XL, wt103_base.yaml): tgt_len 192 tokens per
 * sequence (with mem_len 192 cached positions, which the preset's attention carries); tokens/s counts the
 * batch x tgt_len target tokens of a step.
 */
export const TRANSFORMER_XL_TGT_LEN = 192;

/**
 * WMT14 en-de Transformer (PyTorch/Translation/Transformer): `--max-tokens` per GPU in DLE's single-node
 * scripts, scripts/run_DGX1_FP32.sh (BS=2560) and run_DGX1_AMP.sh (BS=5120); the README table's
 * "5120/2560" column is AMP/FP32 ("using mixed precision we could fit a larger batch size").
 * @type {Readonly<{fp32: number, fp16: number}>}
 */
export const WMT_TOKEN_BUDGET = Object.freeze({ fp32: 2560, fp16: 5120 });

/**
 * fairseq batches sentences of similar length up to the token budget, so a step is modelled as
 * budget / WMT_SENTENCE_LEN sentence pairs of WMT_SENTENCE_LEN source and target tokens. An assumed round
 * length, not a published statistic: tokens per step are fixed by the budget, so it only moves the
 * attention share (docs: accuracy benchmark notes).
 */
export const WMT_SENTENCE_LEN = 32;

/**
 * @param {string} text "5120 tokens"
 * @returns {number} the token budget, NaN when the text is not one
 */
export function parseTokenBudget(text) {
  const match = /^(\d+)\s+tokens$/.exec(text.trim());
  return match ? Number(match[1]) : NaN;
}

/**
 * @param {string} text e.g. "112", "accum-batch 4096 (128/64 accumulation steps)"
 * @returns {{batch: number, accumulated: boolean, steps: {fp32: number, fp16: number} | null}}
 */
export function parseDleBatch(text) {
  const accum = /^accum-batch\s+(\d+)(?:\s*\((\d+)\/(\d+) accumulation steps\))?/.exec(text.trim());
  if (accum) {
    const steps = accum[2] && accum[3] ? { fp32: Number(accum[2]), fp16: Number(accum[3]) } : null;
    return { batch: Number(accum[1]), accumulated: true, steps };
  }
  const plain = /^(\d+)$/.exec(text.trim());
  if (plain) return { batch: Number(plain[1]), accumulated: false, steps: null };
  return { batch: NaN, accumulated: false, steps: null };
}

const DLE_VOCAB_NOTE = 'vocabulary padded from 30522 to 30528 ("Padding for divisibility by 8" in run_pretraining.py and run_squad.py)';

/**
 * A BERT config as DeepLearningExamples' scripts build it: the vocabulary rounded up to a multiple of 8,
 * which keeps the masked-LM head's GEMMs on aligned tensor-core kernels.
 * @param {JsonObject} config a Hugging Face BERT config
 * @returns {JsonObject} the same config with vocab_size padded
 */
export function dleBertConfig(config) {
  const vocab = Number(config.vocab_size);
  return { ...config, vocab_size: vocab % 8 === 0 ? vocab : vocab + 8 - (vocab % 8) };
}

/**
 * One NVIDIA DeepLearningExamples row of e2e-dev.csv: single-GPU training throughput on V100.
 * @param {Record<string, string>} record
 * @param {string} origin
 * @param {(preset: string) => JsonObject} [presetConfig] the Hugging Face config a catalogue preset is
 *   written as (core/data/presets/<id>.json), for rows whose script trains another head on it
 * @returns {Case}
 */
export function dleRowToCase(record, origin, presetConfig) {
  const model = record.model ?? '';
  const gpu = record.gpu ?? '';
  const precisionName = record.precision ?? '';
  const hardware = gpuToCatalogId(`DLE:${gpu}`, origin);
  const precision = DLE_PRECISIONS[precisionName];
  if (!precision) throw new Error(`${origin}: unknown precision "${precisionName}" (expected FP32, TF32 or AMP)`);
  if (record.metric !== 'train throughput') throw new Error(`${origin}: metric "${record.metric}" is not "train throughput"`);
  const unit = DLE_UNITS[record.unit ?? ''];
  if (!unit) throw new Error(`${origin}: unknown throughput unit "${record.unit}"`);
  const gpus = Number(record.n_gpus);
  /** @type {Case} */
  const base = {
    row: `${model} ${/^\d+$/.test(record.batch ?? '') ? `b${record.batch}` : record.batch} ${precisionName} ${gpu}${gpus > 1 ? ` ×${gpus}` : ''}`,
    source: 'dle',
    group: precisionName.toLowerCase(),
    gpu,
    hardware,
    metric: 'throughput',
    measured: positive(Number(record.value), `${origin} value`),
    unit,
    plan: null,
    notes: [],
    origin,
  };
  if (!Number.isInteger(gpus) || gpus < 1) throw new Error(`${origin}: n_gpus "${record.n_gpus}" is not a positive integer`);

  const batch = parseDleBatch(record.batch ?? '');
  const stepsKey = precision === 'fp32' || precision === 'tf32' ? 'fp32' : 'fp16';
  if (/^ResNet-50/.test(model)) {
    if (batch.accumulated || !(batch.batch > 0)) throw new Error(`${origin}: ResNet-50 batch "${record.batch}" is not an integer`);
    base.notes.push('SGD with momentum → optimizer "momentum"; preset resnet50 is v1.5 (torchvision); 224×224');
    if (gpus > 1) base.notes.push(`batch ${batch.batch} per GPU (the README's tables are per GPU) × ${gpus} GPUs, data parallel on the DGX-1's NVLink`);
    return { ...base, plan: plan({ preset: 'resnet50' }, { image_size: 224 }, batch.batch, 1, precision, 'momentum', hardware, gpus) };
  }
  if (gpus > 1) return { ...base, skip: `unsupported: ${gpus}-GPU rows are mapped for ResNet-50 only` };
  if (/^BERT-large pretrain/.test(model)) {
    const seq = Number(record.seq);
    if (!batch.accumulated) throw new Error(`${origin}: BERT pre-training batch "${record.batch}" is not "accum-batch N"`);
    const table = BERT_PRETRAIN_ACCUMULATION[seq];
    const steps = (batch.steps ?? table)?.[stepsKey];
    if (!steps) throw new Error(`${origin}: no accumulation steps for sequence ${seq}`);
    const micro = batch.batch / steps;
    if (!Number.isInteger(micro)) throw new Error(`${origin}: ${batch.batch} samples do not split into ${steps} micro-batches`);
    base.notes.push(
      `${batch.batch} sequences per step = ${steps} accumulated micro-batches of ${micro}` +
        `${batch.steps ? '' : ' (steps from the README table)'}; LAMB → "adam" (not in the core; same two states per parameter); ${DLE_VOCAB_NOTE}`,
    );
    if (!presetConfig) throw new Error(`${origin}: a BERT pre-training row needs the bert-large preset's config`);
    const bert = { hf_config: dleBertConfig(presetConfig('bert-large')), name: 'bert-large' };
    return { ...base, plan: plan(bert, { seq_len: seq }, micro, steps, precision, 'adam', hardware) };
  }
  if (/^BERT-large SQuAD/.test(model)) {
    if (batch.accumulated || !(batch.batch > 0)) throw new Error(`${origin}: SQuAD batch "${record.batch}" is not an integer`);
    const seq = Number(record.seq) > 0 ? Number(record.seq) : SQUAD_SEQ_LEN;
    base.notes.push(
      `sequence ${seq} (run_squad.sh --max_seq_length)${Number(record.seq) > 0 ? '' : ', not in the row'}; Adam; the bert-large preset's config as BertForQuestionAnswering (run_squad.py's class); ${DLE_VOCAB_NOTE}`,
    );
    if (!presetConfig) throw new Error(`${origin}: a SQuAD row needs the bert-large preset's config`);
    const squad = {
      hf_config: { ...dleBertConfig(presetConfig('bert-large')), architectures: ['BertForQuestionAnswering'] },
      name: 'bert-large',
    };
    return { ...base, plan: plan(squad, { seq_len: seq }, batch.batch, 1, precision, 'adam', hardware) };
  }
  if (/^Transformer-XL base/.test(model)) {
    if (batch.accumulated || !(batch.batch > 0)) throw new Error(`${origin}: Transformer-XL batch "${record.batch}" is not an integer`);
    const seq = TRANSFORMER_XL_TGT_LEN;
    base.notes.push(
      `${batch.batch} x ${seq} target tokens per step (tgt_len), attending to ${seq} cached positions; JIT LAMB → "adam" (same two states per parameter); adaptive softmax tail work from Zipf's law`,
    );
    const p = plan({ preset: 'transformer-xl-base' }, { seq_len: seq }, batch.batch, 1, precision, 'adam', hardware);
    return { ...base, plan: { ...p, samplesPerStep: batch.batch * seq } };
  }
  if (/^SSD300/.test(model)) {
    if (batch.accumulated || !(batch.batch > 0)) throw new Error(`${origin}: SSD300 batch "${record.batch}" is not an integer`);
    base.notes.push('SGD with momentum → "momentum"; 300×300; box encoding, hard negative mining and data loading are not costed');
    return { ...base, plan: plan({ preset: 'ssd300' }, { image_size: 300 }, batch.batch, 1, precision, 'momentum', hardware) };
  }
  if (/^Transformer \(WMT\)/.test(model)) {
    const budget = WMT_TOKEN_BUDGET[stepsKey];
    const rowBudget = parseTokenBudget(record.batch ?? '');
    const seq = WMT_SENTENCE_LEN;
    base.notes.push(
      `--max-tokens ${budget} (DLE's ${stepsKey === 'fp32' ? 'run_DGX1_FP32.sh' : 'run_DGX1_AMP.sh'})` +
        `${rowBudget === budget ? '' : `; the row's batch column says ${record.batch ?? '?'}`}` +
        ` ≈ ${budget / seq} sentence pairs of ${seq} tokens (assumed length; padding and fairseq's max(source, target) budget rule not modelled); Adam`,
    );
    const p = plan({ preset: 'transformer-big-wmt' }, { seq_len: seq }, budget / seq, 1, precision, 'adam', hardware);
    return { ...base, plan: { ...p, samplesPerStep: budget } };
  }
  return { ...base, skip: `unsupported: no preset or config mapped for "${model}"` };
}

/**
 * @param {PredictRequest['model']} model
 * @param {{seq_len?: number, image_size?: number}} shape
 * @param {number} micro micro-batch
 * @param {number} accumulation
 * @param {Precision} precision
 * @param {Optimizer} optimizer
 * @param {string} hardware
 * @param {number} [gpus] data-parallel GPUs, each running `micro` samples (1: a single-GPU request)
 * @returns {Plan}
 */
function plan(model, shape, micro, accumulation, precision, optimizer, hardware, gpus = 1) {
  /** @type {PredictRequest} */
  const request = {
    model,
    training: { batch_size: micro * gpus, ...shape, precision, optimizer },
    hardware: [hardware],
    options: { per_layer: false },
  };
  if (gpus > 1) request.parallel = { data: gpus, micro_batches: 1 };
  return { request, samplesPerStep: micro * accumulation * gpus, accumulation };
}

// ------------------------------------------------------------------------------------------ Justus VGG-16

/**
 * @param {string} fileName e.g. benchmark_VGG16_V100_sgd_20181022.csv
 * @returns {{gpu: string, kind: 'fw' | 'sgd' | 'adam'} | null}
 */
export function parseJustusFileName(fileName) {
  const match = /^benchmark_VGG16_([A-Za-z0-9]+)_(FW|sgd|adam)_\d+\.csv$/.exec(fileName);
  if (!match) return null;
  const kind = match[2] === 'FW' ? 'fw' : match[2] === 'sgd' ? 'sgd' : 'adam';
  return { gpu: match[1] ?? '', kind };
}

/**
 * One row of a Justus et al. VGG-16 benchmark file: TensorFlow 1.x time per batch. FW = forward
 * only (compare forward_ms); sgd/adam = a training step with that optimizer (compare step_ms).
 * @param {Record<string, string>} record
 * @param {string} fileName
 * @param {string} origin
 * @returns {Case}
 */
export function justusRowToCase(record, fileName, origin) {
  const file = parseJustusFileName(fileName);
  if (!file) throw new Error(`${origin}: not a benchmark_VGG16_<gpu>_<FW|sgd|adam>_<date>.csv file`);
  const hardware = gpuToCatalogId(`Justus:${file.gpu}`, origin);
  const bits = Number(record['precision (bits)']);
  if (bits !== 32) throw new Error(`${origin}: precision ${bits} bits; only 32 (fp32) is mapped`);
  const batch = positive(Number(record.batchsize), `${origin} batchsize`);
  const imageSize = Number(record.imsize) > 0 ? Number(record.imsize) : 224;
  const operation = record.operation ?? '';
  /** @type {Case} */
  const base = {
    row: `VGG-16 ${file.kind === 'fw' ? 'forward' : file.kind} b${batch} ${imageSize}px ${file.gpu}`,
    source: 'justus',
    group: file.kind,
    gpu: file.gpu,
    hardware,
    metric: file.kind === 'fw' ? 'forward_ms' : 'step_ms',
    measured: positive(Number(record['time per batch (ms)']), `${origin} time per batch`),
    unit: 'ms',
    plan: null,
    notes: [],
    origin,
  };
  if (operation !== 'VGG-16') return { ...base, skip: `unsupported: operation "${operation}" has no preset` };
  /** @type {Optimizer} */
  const optimizer = file.kind === 'fw' ? 'none' : file.kind;
  return { ...base, plan: plan({ preset: 'vgg16' }, { image_size: imageSize }, batch, 1, 'fp32', optimizer, hardware) };
}

// ------------------------------------------------------------------------------------------ e2e-dev.csv

/**
 * The NeuSight and Justus rows of e2e-dev.csv repeat rows of neusight-labels-dev.csv and the
 * benchmark files; they are checked against those rather than counted twice.
 * @param {Record<string, string>} record
 * @returns {{kind: 'neusight', gpu: string, config: string} | {kind: 'justus', file: string, batch: number} | {kind: 'dle'} | {kind: 'unknown'}}
 */
export function classifyE2eRow(record) {
  const source = record.source ?? '';
  const path = record.path ?? '';
  const fileName = path.split('/').pop() ?? '';
  if (source === 'NeuSight label') return { kind: 'neusight', gpu: record.gpu ?? '', config: fileName.replace(/\.json$/, '') };
  if (source.startsWith('Justus')) return { kind: 'justus', file: fileName, batch: Number(record.batch) };
  if (source === 'NVIDIA DLE') return { kind: 'dle' };
  return { kind: 'unknown' };
}
