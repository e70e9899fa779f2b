// The accuracy benchmark's pure parts (web/bench/accuracy/): row → request mapping, GPU names,
// metrics, predictor read-out and target verdicts. No wasm and no data files: the accuracy numbers
// themselves are what `npm run bench:accuracy` reports, not what this tests.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseCsvRows, parseTrimmedCsvObjects } from '../../models/data-tools/csv.mjs';
import { ape, mean, median, signedError, summarize } from '../../web/bench/accuracy/metrics.mjs';
import { caseValue, flopsBaseline, intervalFor, readPredictors } from '../../web/bench/accuracy/predictors.mjs';
import { presetHfConfig } from '../../web/bench/accuracy/load.mjs';
import { TARGETS, judgeTarget } from '../../web/bench/accuracy/report.mjs';
import {
  classifyE2eRow,
  dleRowToCase,
  gpuToCatalogId,
  justusRowToCase,
  neusightModelConfig,
  neusightRowToCase,
  parseDleBatch,
  parseNeusightConfig,
} from '../../web/bench/accuracy/rows.mjs';

/**
 * @typedef {import('../../web/bench/accuracy/rows.mjs').Case} Case
 * @typedef {import('../../web/bench/accuracy/rows.mjs').Plan} Plan
 * @typedef {import('../../web/bench/accuracy/run.mjs').CaseResult} CaseResult
 */

/** @param {Case} item @returns {Plan} */
function planOf(item) {
  assert.ok(item.plan, `expected a plan, got skip: ${item.skip}`);
  return item.plan;
}

const GPT2 = { model_type: 'gpt2', n_embd: 1280, n_head: 20, n_layer: 36, vocab_size: 50257 };
/** @param {string} model */
const configs = (model) => (model === 'gpt2_large' || model === 'bert_large' ? GPT2 : undefined);

/** @param {string} gpu @param {string} config @param {string} e2e @param {string} [fw] @param {string} [bw] */
function neusightRecord(gpu, config, e2e, fw = e2e, bw = '0') {
  return { gpu, config, num_layer: '36', e2e_latency_ms: e2e, fw_latency_ms: fw, bwall_latency_ms: bw };
}

/** @param {Partial<Record<string, string>>} fields */
function dleRecord(fields) {
  return {
    source: 'NVIDIA DLE',
    model: 'ResNet-50 v1.5',
    batch: '112',
    seq: '',
    precision: 'FP32',
    gpu: 'V100 16GB',
    n_gpus: '1',
    metric: 'train throughput',
    value: '367',
    unit: 'img/s',
    ...fields,
  };
}

describe('NeuSight config', () => {
  test('model, mode, sequence, batch and the parallel suffixes', () => {
    assert.deepEqual(parseNeusightConfig('gpt2_large-train-1024-4-dp4'), {
      model: 'gpt2_large', mode: 'train', seq: 1024, batch: 4, parallel: { kind: 'dp', degree: 4 }, fusion: false,
    });
    assert.deepEqual(parseNeusightConfig('gpt2_large-train-1024-4-tp4').parallel, { kind: 'tp', degree: 4 });
    assert.deepEqual(parseNeusightConfig('gpt2_large-train-1024-4-pp4_1').parallel, { kind: 'pp', degree: 4, micro: 1 });
    assert.deepEqual(parseNeusightConfig('bert_large-inf-512-16-fusion'), {
      model: 'bert_large', mode: 'inf', seq: 512, batch: 16, parallel: null, fusion: true,
    });
    assert.deepEqual(parseNeusightConfig('opt_13-inf-2048-2'), {
      model: 'opt_13', mode: 'inf', seq: 2048, batch: 2, parallel: null, fusion: false,
    });
  });

  test('a config of another shape is an error naming it', () => {
    assert.throws(() => parseNeusightConfig('gpt2_large-eval-1024-4'), /gpt2_large-eval-1024-4/);
    assert.throws(() => parseNeusightConfig('gpt2_large-train-1024'), /does not read/);
    assert.throws(() => parseNeusightConfig('gpt2_large-train-1024-4-xx2'), /does not read/);
  });
});

describe('GPU names', () => {
  test('each device of the validation data maps to its catalogue id', () => {
    const expected = {
      'NVIDIA_A100-PCIE-40GB': 'a100-pcie-40gb',
      'NVIDIA_A100-SXM4-40GB': 'a100-sxm4-40gb',
      'Tesla_V100-PCIE-32GB': 'v100-pcie-32gb',
      Tesla_T4: 't4',
      Tesla_P4: 'p4',
      'Tesla_P100-PCIE-16GB': 'p100-pcie-16gb',
      'DLE:V100 16GB': 'v100-sxm2-16gb',
      'DLE:V100 32GB': 'v100-sxm2-32gb',
      'Justus:V100': 'v100-sxm2-16gb',
    };
    for (const [name, id] of Object.entries(expected)) assert.equal(gpuToCatalogId(name, 'test'), id);
  });

  test('an unknown device fails loudly, naming it and the file', () => {
    assert.throws(() => gpuToCatalogId('Tesla_K80', 'labels.csv'), /labels\.csv: unknown GPU "Tesla_K80"/);
    assert.throws(
      () => neusightRowToCase(neusightRecord('NVIDIA_H100', 'gpt2_large-inf-1024-4', '10'), configs, 'x.csv:2'),
      /unknown GPU "NVIDIA_H100"/,
    );
  });
});

describe('NeuSight rows', () => {
  test('a train label is forward + backward without the optimizer: optimizer none, compared on step_ms', () => {
    const item = neusightRowToCase(
      neusightRecord('Tesla_V100-PCIE-32GB', 'bert_large-train-512-8', '841.12', '298.74', '542.39'),
      configs,
      'labels.csv:39',
    );
    assert.equal(item.source, 'neusight');
    assert.equal(item.group, 'train');
    assert.equal(item.metric, 'step_ms');
    assert.equal(item.measured, 841.12);
    assert.equal(item.hardware, 'v100-pcie-32gb');
    assert.deepEqual(item.measuredPhases, { forward_ms: 298.74, backward_ms: 542.39 });
    assert.deepEqual(planOf(item).request, {
      model: { hf_config: GPT2, name: 'bert_large' },
      training: { batch_size: 8, seq_len: 512, precision: 'fp32', optimizer: 'none' },
      hardware: ['v100-pcie-32gb'],
      options: { per_layer: false },
    });
  });

  test('an inf label is forward only; fused rows are their own source', () => {
    const inf = neusightRowToCase(neusightRecord('Tesla_T4', 'gpt2_large-inf-1024-4', '2505.2'), configs, 'l:2');
    assert.equal(inf.metric, 'forward_ms');
    assert.equal(inf.group, 'inf');
    assert.equal(inf.measuredPhases, undefined);
    assert.equal(planOf(inf).request.training?.batch_size, 4);
    const fused = neusightRowToCase(neusightRecord('NVIDIA_A100-PCIE-40GB', 'bert_large-inf-512-16-fusion', '345.2'), configs, 'l:3');
    assert.equal(fused.source, 'neusight-fusion');
    assert.ok(fused.plan);
  });

  test("the model is the class NeuSight's script builds: BERT pre-training / sequence classification, eval-mode dropout", () => {
    const bert = { architectures: ['BertLMHeadModel'], model_type: 'bert', hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1 };
    assert.deepEqual(neusightModelConfig(bert, 'train'), { ...bert, architectures: ['BertForPreTraining'] });
    assert.deepEqual(neusightModelConfig(bert, 'inf'), {
      architectures: ['BertForSequenceClassification'],
      model_type: 'bert',
      hidden_dropout_prob: 0,
      attention_probs_dropout_prob: 0,
    });
    const gpt = { architectures: ['GPT2LMHeadModel'], resid_pdrop: 0.1, embd_pdrop: 0.1, attn_pdrop: 0.1, n_embd: 1280 };
    assert.deepEqual(neusightModelConfig(gpt, 'train'), gpt);
    assert.deepEqual(neusightModelConfig(gpt, 'inf'), { ...gpt, resid_pdrop: 0, embd_pdrop: 0, attn_pdrop: 0 });
    assert.equal(bert.hidden_dropout_prob, 0.1, 'the loaded config is not modified');
    const item = neusightRowToCase(neusightRecord('Tesla_T4', 'bert_large-inf-512-8', '694.5'), () => bert, 'l:4');
    assert.deepEqual(/** @type {any} */ (planOf(item).request.model).hf_config.architectures, ['BertForSequenceClassification']);
  });

  test('multi-GPU rows are whole Megatron steps over the global batch; a missing model config is unsupported', () => {
    const expected = {
      'gpt2_large-train-1024-4-dp4': { data: 4, micro_batches: 1 },
      'gpt2_large-train-1024-4-tp4': { tensor: 4, micro_batches: 1 },
      'gpt2_large-train-1024-4-pp4_1': { pipeline: 4, micro_batches: 1 },
    };
    for (const [config, parallel] of Object.entries(expected)) {
      const item = neusightRowToCase(neusightRecord('NVIDIA_A100-SXM4-40GB', config, '452.3', '0', '0'), configs, 'l:20');
      const request = planOf(item).request;
      assert.deepEqual(request.parallel, parallel);
      assert.deepEqual(request.training, { batch_size: 4, seq_len: 1024, precision: 'fp32', optimizer: 'adamw' });
      assert.equal(item.metric, 'step_ms');
      assert.equal(item.group, 'parallel');
      assert.equal(item.hardware, 'a100-sxm4-40gb');
      assert.equal(planOf(item).samplesPerStep, 4);
    }
    const none = neusightRowToCase(neusightRecord('Tesla_P4', 'llama-inf-512-1', '10'), configs, 'l:5');
    assert.equal(none.plan, null);
    assert.match(none.skip ?? '', /^unsupported: no model config validation\/models\/llama\.json/);
  });
});

describe('DeepLearningExamples rows', () => {
  test('ResNet-50: preset at 224, momentum SGD, batch and precision from the row, DGX-1 V100 = SXM2', () => {
    const fp32 = dleRowToCase(dleRecord({}), 'e2e:8');
    assert.equal(fp32.metric, 'throughput');
    assert.equal(fp32.unit, 'img/s');
    assert.equal(fp32.measured, 367);
    assert.deepEqual(planOf(fp32), {
      request: {
        model: { preset: 'resnet50' },
        training: { batch_size: 112, image_size: 224, precision: 'fp32', optimizer: 'momentum' },
        hardware: ['v100-sxm2-16gb'],
        options: { per_layer: false },
      },
      samplesPerStep: 112,
      accumulation: 1,
    });
    const amp = dleRowToCase(dleRecord({ batch: '256', precision: 'AMP', gpu: 'V100 32GB', value: '1156' }), 'e2e:13');
    assert.equal(amp.group, 'amp');
    assert.equal(planOf(amp).request.training?.precision, 'fp16');
    assert.deepEqual(planOf(amp).request.hardware, ['v100-sxm2-32gb']);
  });

  test('BERT pre-training: accumulated batch split into micro-batches, LAMB → adam, vocabulary padded to 8', () => {
    const stated = dleRowToCase(
      dleRecord({ model: 'BERT-large pretrain ph1', batch: 'accum-batch 4096 (128/64 accumulation steps)', seq: '128', gpu: 'V100 32GB', value: '50', unit: 'seq/s' }),
      'e2e:14',
      presetHfConfig,
    );
    assert.equal(presetHfConfig('bert-large').vocab_size, 30522);
    assert.deepEqual(planOf(stated), {
      request: {
        model: { hf_config: { ...presetHfConfig('bert-large'), vocab_size: 30528 }, name: 'bert-large' },
        training: { batch_size: 32, seq_len: 128, precision: 'fp32', optimizer: 'adam' },
        hardware: ['v100-sxm2-32gb'],
        options: { per_layer: false },
      },
      samplesPerStep: 4096,
      accumulation: 128,
    });
    const fromTable = dleRowToCase(
      dleRecord({ model: 'BERT-large pretrain ph2', batch: 'accum-batch 2048', seq: '512', precision: 'AMP', gpu: 'V100 32GB', value: '75', unit: 'seq/s' }),
      'e2e:17',
      presetHfConfig,
    );
    const plan = planOf(fromTable);
    assert.equal(plan.accumulation, 256);
    assert.equal(plan.request.training?.batch_size, 8);
    assert.equal(plan.request.training?.seq_len, 512);
    assert.equal(plan.request.training?.precision, 'fp16');
  });

  test('SQuAD fine-tuning runs at sequence 384 with Adam', () => {
    const squadRow = dleRecord({ model: 'BERT-large SQuAD', batch: '8', gpu: 'V100 32GB', value: '12', unit: 'seq/s' });
    const item = dleRowToCase(squadRow, 'e2e:18', presetHfConfig);
    assert.deepEqual(planOf(item).request.training, { batch_size: 8, seq_len: 384, precision: 'fp32', optimizer: 'adam' });
    // run_squad.py trains BertForQuestionAnswering on the bert-large config (no masked-LM head).
    const model = /** @type {any} */ (planOf(item).request.model);
    assert.deepEqual(model.hf_config.architectures, ['BertForQuestionAnswering']);
    assert.equal(model.hf_config.hidden_size, 1024);
    assert.equal(model.hf_config.vocab_size, 30528);  // run_squad.py pads it like run_pretraining.py
    assert.throws(() => dleRowToCase(squadRow, 'e2e:18'), /needs the bert-large preset's config/);
  });

  test('8-GPU ResNet-50 rows are data parallel over the per-GPU batch; unsupported models have a reason; bad rows fail', () => {
    const eight = dleRowToCase(dleRecord({ n_gpus: '8', value: '2855' }), 'e2e:10');
    assert.deepEqual(planOf(eight).request.parallel, { data: 8, micro_batches: 1 });
    assert.equal(planOf(eight).request.training?.batch_size, 8 * 112);
    assert.equal(planOf(eight).samplesPerStep, 8 * 112);
    const unknown = dleRowToCase(dleRecord({ model: 'Mask R-CNN', unit: 'img/s' }), 'e2e:20');
    assert.equal(unknown.plan, null);
    assert.match(unknown.skip ?? '', /^unsupported: /);
    assert.throws(() => dleRowToCase(dleRecord({ gpu: 'A100 80GB' }), 'e2e:9'), /unknown GPU "DLE:A100 80GB"/);
    assert.throws(() => dleRowToCase(dleRecord({ precision: 'INT8' }), 'e2e:9'), /unknown precision "INT8"/);
    assert.throws(() => dleRowToCase(dleRecord({ unit: 'ms' }), 'e2e:9'), /unknown throughput unit/);
  });

  test('Transformer-XL counts batch x tgt_len tokens; SSD300 at 300 px with momentum; WMT from the token budget', () => {
    const xl = planOf(dleRowToCase(dleRecord({ model: 'Transformer-XL base', batch: '16', precision: 'AMP', unit: 'tokens/s' }), 'e2e:20'));
    assert.deepEqual(xl.request.training, { batch_size: 16, seq_len: 192, precision: 'fp16', optimizer: 'adam' });
    assert.equal(xl.samplesPerStep, 16 * 192);
    const ssd = planOf(dleRowToCase(dleRecord({ model: 'SSD300', batch: '32', unit: 'img/s' }), 'e2e:21'));
    assert.deepEqual(ssd.request.model, { preset: 'ssd300' });
    assert.deepEqual(ssd.request.training, { batch_size: 32, image_size: 300, precision: 'fp32', optimizer: 'momentum' });
    assert.equal(ssd.samplesPerStep, 32);
    // DLE's scripts: 2560 tokens per GPU in FP32, 5120 with AMP, whatever the batch column says.
    for (const [precision, budget] of /** @type {[string, number][]} */ ([['FP32', 2560], ['AMP', 5120]])) {
      const item = dleRowToCase(dleRecord({ model: 'Transformer (WMT)', batch: '5120 tokens', precision, unit: 'tokens/s' }), 'e2e:22');
      const wmt = planOf(item);
      assert.equal(wmt.samplesPerStep, budget);
      assert.equal((wmt.request.training?.batch_size ?? 0) * (wmt.request.training?.seq_len ?? 0), budget);
      assert.equal(item.notes.some((n) => n.includes('batch column says')), budget !== 5120);
    }
  });

  test('batch column forms', () => {
    assert.deepEqual(parseDleBatch('112'), { batch: 112, accumulated: false, steps: null });
    assert.deepEqual(parseDleBatch('accum-batch 4096 (128/64 accumulation steps)'), {
      batch: 4096, accumulated: true, steps: { fp32: 128, fp16: 64 },
    });
    assert.deepEqual(parseDleBatch('accum-batch 2048'), { batch: 2048, accumulated: true, steps: null });
    assert.ok(Number.isNaN(parseDleBatch('5120 tokens').batch));
  });
});

describe('Justus VGG-16 rows', () => {
  const record = { operation: 'VGG-16', imsize: '224', 'precision (bits)': '32', batchsize: '16', 'time per batch (ms)': '39.723' };

  test('FW is forward only, sgd/adam a training step with that optimizer, on the SXM2 16 GB V100', () => {
    const fw = justusRowToCase(record, 'benchmark_VGG16_V100_FW_20181022.csv', 'fw:6');
    assert.equal(fw.metric, 'forward_ms');
    assert.equal(fw.measured, 39.723);
    assert.deepEqual(planOf(fw).request, {
      model: { preset: 'vgg16' },
      training: { batch_size: 16, image_size: 224, precision: 'fp32', optimizer: 'none' },
      hardware: ['v100-sxm2-16gb'],
      options: { per_layer: false },
    });
    const sgd = justusRowToCase({ ...record, imsize: '160' }, 'benchmark_VGG16_V100_sgd_20181022.csv', 'sgd:6');
    assert.equal(sgd.metric, 'step_ms');
    assert.equal(planOf(sgd).request.training?.optimizer, 'sgd');
    assert.equal(planOf(sgd).request.training?.image_size, 160);
    const adam = justusRowToCase(record, 'benchmark_VGG16_V100_adam_20181022.csv', 'adam:6');
    assert.equal(planOf(adam).request.training?.optimizer, 'adam');
  });

  test('the header of the benchmark files, with its spaces, reads as these keys', () => {
    const text = 'operation, imsize, precision (bits), batchsize,time per batch (ms), comment\nVGG-16, 224, 32, 1, 20.666, \n';
    const [row] = parseTrimmedCsvObjects(text, 'vgg.csv');
    assert.deepEqual(row, { operation: 'VGG-16', imsize: '224', 'precision (bits)': '32', batchsize: '1', 'time per batch (ms)': '20.666', comment: '' });
  });
});

describe('e2e-dev.csv', () => {
  test('quoted cells keep their commas; repeated NeuSight and Justus rows are recognised', () => {
    const rows = parseCsvRows('a,b,c\r\n1,"x, y","say ""hi"""\n');
    assert.deepEqual(rows, [['a', 'b', 'c'], ['1', 'x, y', 'say "hi"']]);
    assert.deepEqual(
      classifyE2eRow({ source: 'NeuSight label', gpu: 'Tesla_V100-PCIE-32GB', path: 'scripts/asplos/label/Tesla_V100-PCIE-32GB/bert_large-train-512-8.json' }),
      { kind: 'neusight', gpu: 'Tesla_V100-PCIE-32GB', config: 'bert_large-train-512-8' },
    );
    assert.deepEqual(
      classifyE2eRow({ source: 'Justus et al. 2018 repo', path: 'benchmark/data/benchmark_VGG16_V100_adam_20181022.csv', batch: '64' }),
      { kind: 'justus', file: 'benchmark_VGG16_V100_adam_20181022.csv', batch: 64 },
    );
    assert.deepEqual(classifyE2eRow({ source: 'NVIDIA DLE' }), { kind: 'dle' });
  });
});

describe('metrics', () => {
  test('APE, signed error, mean and median', () => {
    assert.equal(ape(110, 100), 10);
    assert.equal(ape(90, 100), 10);
    assert.equal(signedError(90, 100), -10);
    assert.equal(mean([10, 20, 60]), 30);
    assert.equal(median([30, 10, 20]), 20);
    assert.equal(median([40, 10, 30, 20]), 25);
    assert.ok(Number.isNaN(median([])));
    assert.throws(() => ape(1, 0), RangeError);
  });

  test('summary of predicted / measured pairs', () => {
    const summary = summarize([
      { predicted: 110, measured: 100 },
      { predicted: 40, measured: 50 },
      { predicted: 300, measured: 200 },
    ]);
    assert.equal(summary.n, 3);
    assert.ok(Math.abs(summary.mape - (10 + 20 + 50) / 3) < 1e-12);
    assert.equal(summary.medape, 20);
    assert.ok(Math.abs(summary.bias - (10 - 20 + 50) / 3) < 1e-12);
  });
});

describe('predictors', () => {
  /** @param {string} predictor @param {unknown} [baselines] */
  function response(predictor, baselines) {
    const result = { hardware: 'v100-pcie-32gb', forward_ms: 10, step_ms: 30, ...(baselines ? { baselines } : {}) };
    return /** @type {import('../../web/src/types').PredictResponse} */ (
      /** @type {unknown} */ ({ predictor, model: { flops_per_step: { forward: 2e12, backward: 4e12, optimizer: 0, total: 6e12 } }, results: [result] })
    );
  }

  test('FLOPs / (peak × 40%)', () => {
    assert.deepEqual(flopsBaseline({ forward: 2e12, total: 6e12 }, 10), { forward_ms: 500, step_ms: 1500 });
  });

  test('without reported baselines: roofline is the main predictor only while it is the roofline', () => {
    const roof = response('roofline');
    const read = readPredictors(roof, /** @type {import('../../web/src/types').HardwareResult} */ (roof.results[0]), 10);
    assert.deepEqual(read.main.times, { forward_ms: 10, step_ms: 30 });
    assert.deepEqual(read.roofline.times, { forward_ms: 10, step_ms: 30 });
    assert.equal(read.prenet.times, null);
    assert.deepEqual(read.flops40.times, { forward_ms: 500, step_ms: 1500 });
    const learned = response('learned');
    const other = readPredictors(learned, /** @type {import('../../web/src/types').HardwareResult} */ (learned.results[0]), 10);
    assert.equal(other.roofline.times, null);
    const analytic = /** @type {import('../../web/src/types').HardwareResult} */ (/** @type {unknown} */ ({ forward_ms: 12, step_ms: 40 }));
    const fromEngine = readPredictors(learned, /** @type {import('../../web/src/types').HardwareResult} */ (learned.results[0]), 10, analytic);
    assert.deepEqual(fromEngine.roofline.times, { forward_ms: 12, step_ms: 40 });
    assert.deepEqual(fromEngine.main.times, { forward_ms: 10, step_ms: 30 });
  });

  test('reported baselines are used as they are', () => {
    const baselines = {
      roofline: { forward_ms: 11, step_ms: 33 },
      prenet: { forward_ms: 12, step_ms: 36 },
      flops40: { forward_ms: 13, step_ms: 39 },
    };
    const r = response('learned', baselines);
    const read = readPredictors(r, /** @type {import('../../web/src/types').HardwareResult} */ (r.results[0]), 10);
    assert.deepEqual(read.roofline.times, baselines.roofline);
    assert.deepEqual(read.prenet.times, baselines.prenet);
    assert.deepEqual(read.flops40.times, baselines.flops40);
    assert.equal(read.prenet.from, 'core');
  });

  test('throughput: samples per optimizer step over accumulation × (fwd + bwd) + one update', () => {
    const plan = { request: { model: { preset: 'bert-large' } }, samplesPerStep: 4096, accumulation: 128 };
    const value = caseValue('throughput', plan, { forward_ms: 30, step_ms: 100 }, { forward_ms: 30, step_ms: 90 });
    assert.ok(Math.abs(value - 4096 / ((128 * 90 + 10) / 1000)) < 1e-9);
    const single = { ...plan, samplesPerStep: 112, accumulation: 1 };
    assert.equal(caseValue('throughput', single, { forward_ms: 100, step_ms: 400 }, null), 280);
    assert.equal(caseValue('forward_ms', single, { forward_ms: 100, step_ms: 400 }, null), 100);
    assert.equal(caseValue('step_ms', single, { forward_ms: 100, step_ms: 400 }, null), 400);
    assert.throws(() => caseValue('throughput', plan, { forward_ms: 30, step_ms: 100 }, null), /optimizer-"none"/);
  });
});

describe('intervals', () => {
  /** @param {Record<string, unknown>} fields */
  const result = (fields) => /** @type {import('../../web/src/types').HardwareResult} */ (/** @type {unknown} */ (fields));
  const single = { request: { model: { preset: 'resnet50' } }, samplesPerStep: 100, accumulation: 1 };

  test('step rows use step_ms_interval; throughput rows invert it; forward rows need forward_ms_interval', () => {
    const r = result({ step_ms_interval: [200, 400] });
    assert.deepEqual(intervalFor('step_ms', single, r), [200, 400]);
    assert.deepEqual(intervalFor('throughput', single, r), [250, 500]);
    assert.equal(intervalFor('forward_ms', single, r), null);
    assert.deepEqual(intervalFor('forward_ms', single, result({ forward_ms_interval: [1, 2] })), [1, 2]);
  });

  test('no interval for accumulating rows, or for a malformed one', () => {
    assert.equal(intervalFor('throughput', { ...single, accumulation: 8 }, result({ step_ms_interval: [200, 400] })), null);
    assert.equal(intervalFor('step_ms', single, result({ step_ms_interval: [400, 200] })), null);
    assert.equal(intervalFor('step_ms', single, result({ step_ms_interval: 'x' })), null);
    assert.equal(intervalFor('step_ms', single, result({})), null);
  });
});

describe('targets', () => {
  /** @param {Partial<Case>} fields @param {Partial<CaseResult>} result @returns {CaseResult} */
  function result(fields, result) {
    /** @type {Case} */
    const item = { row: 'r', source: 'neusight', group: 'inf', gpu: 'g', hardware: 't4', metric: 'forward_ms', measured: 100, unit: 'ms', plan: null, notes: [], origin: 'o', ...fields };
    return {
      case: item,
      status: 'predicted',
      values: { main: 105, roofline: 105, prenet: null, flops40: 150 },
      from: { main: '', roofline: '', prenet: '', flops40: '' },
      warnings: [],
      ...result,
    };
  }
  const target = /** @type {import('../../web/bench/accuracy/report.mjs').Target} */ (TARGETS[0]);

  test('met only when within the limit and every single-GPU row is predicted; multi-GPU rows do not count', () => {
    const ok = [result({}, {}), result({}, { values: { main: 90, roofline: 90, prenet: null, flops40: 150 } })];
    const multi = result({ skip: 'not supported yet (issue 7): multi-GPU (4-way data parallel)' }, { status: 'skipped' });
    const verdict = judgeTarget(target, [...ok, multi]);
    assert.equal(verdict.met, true);
    assert.equal(verdict.rows, 2);
    assert.ok(Math.abs((verdict.main?.mape ?? NaN) - 7.5) < 1e-12);
    const missing = judgeTarget(target, [...ok, result({}, { status: 'unsupported', reason: 'unsupported: x' })]);
    assert.equal(missing.met, false);
    assert.match(missing.text, /1 of 3 rows not predicted/);
  });

  test('baselines: better, identical (not better) or cannot tell', () => {
    const verdict = judgeTarget(target, [result({}, {})]);
    const byId = Object.fromEntries(verdict.baselines.map((b) => [b.id, b]));
    assert.equal(byId.flops40?.better, true);
    assert.equal(byId.roofline?.better, false);
    assert.match(byId.roofline?.text ?? '', /it is the main predictor/);
    assert.equal(byId.prenet?.better, null);
  });
});
