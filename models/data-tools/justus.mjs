// Justus et al. 2018 (CDECatapult/ml-performance-prediction @ e649f32): one TensorFlow 1.x layer per
// row, FP32, `timeUsed_median` in ms. Files: <shared>/layers/justus2018/{dense,convolution}_<gpu>.csv.
// Codes follow the upstream benchmark script (Generate_train_data/benchmark.py): activation_list =
// [None, relu, tanh, sigmoid]; optimizer_list = [None, GradientDescent, Adadelta, Adagrad, Momentum,
// Adam, RMSProp]; padding 1 = 'SAME', 0 = 'VALID'.

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readCsvObjects } from './csv.mjs';
import { JUSTUS_DEVICES, mapDevice } from './gpus.mjs';
import { parseDim, parseTime } from './table.mjs';

export const ACTIVATIONS = ['none', 'relu', 'tanh', 'sigmoid'];
export const OPTIMIZERS = ['none', 'sgd', 'adadelta', 'adagrad', 'momentum', 'adam', 'rmsprop'];
const PADDING = ['valid', 'same'];
const SOURCE = 'justus2018';

function code(list, cell) {
  const v = parseDim(cell);
  return v !== null && v < list.length ? list[v] : null;
}

function process(path, table, dimCols, emit) {
  const { header, records } = readCsvObjects(path);
  for (const col of ['gpu_name', 'timeUsed_median', 'precision', 'activation_fct', 'optimizer', ...dimCols]) {
    if (!header.includes(col)) throw new Error(`${path}: column ${col} missing`);
  }
  for (const rec of records) {
    const gpu = mapDevice(JUSTUS_DEVICES, rec.gpu_name, `${path}:${rec.__line}`);
    table.countRaw(SOURCE, gpu);
    const t = parseTime(rec.timeUsed_median);
    if (t.reason) {
      table.skip(SOURCE, gpu, t.reason);
      continue;
    }
    if (String(rec.precision).trim() !== '32') {
      table.skip(SOURCE, gpu, `precision ${rec.precision} (only 32 is documented)`);
      continue;
    }
    const activation = code(ACTIVATIONS, rec.activation_fct);
    const optimizer = code(OPTIMIZERS, rec.optimizer);
    if (!activation || !optimizer) {
      table.skip(SOURCE, gpu, 'unknown activation or optimizer code');
      continue;
    }
    const d = {};
    let bad = null;
    for (const c of dimCols) {
      const v = parseDim(rec[c]);
      if (v === null || (v === 0 && c !== 'padding')) {
        bad = `missing, zero or non-integer ${c}`;
        break;
      }
      d[c] = v;
    }
    if (bad) {
      table.skip(SOURCE, gpu, bad);
      continue;
    }
    emit(gpu, d, activation, optimizer, t.value, rec);
  }
}

export function buildJustus(shared, tables) {
  const root = join(shared, 'layers', 'justus2018');
  const all = readdirSync(root).filter((f) => f.endsWith('.csv')).sort();
  const dense = all.filter((f) => f.startsWith('dense_'));
  const conv = all.filter((f) => f.startsWith('convolution_'));
  const other = all.filter((f) => !dense.includes(f) && !conv.includes(f));
  if (other.length) throw new Error(`${root}: unexpected files ${other.join(', ')}`);

  for (const f of dense) {
    process(join(root, f), tables.layers_dense, ['batchsize', 'dim_input', 'dim_output'], (gpu, d, activation, optimizer, ms) => {
      tables.layers_dense.add({
        source: SOURCE, gpu, precision: 'fp32', activation, batch: d.batchsize,
        d_in: d.dim_input, d_out: d.dim_output, optimizer, time_ms: ms,
      });
    });
  }
  const convCols = ['batchsize', 'channels_in', 'channels_out', 'kernelsize', 'matsize', 'strides', 'padding'];
  for (const f of conv) {
    process(join(root, f), tables.layers_conv, convCols, (gpu, d, activation, optimizer, ms, rec) => {
      const padding = PADDING[d.padding];
      const biasCell = String(rec.use_bias).trim();
      const bias = biasCell === 'True' ? 1 : biasCell === 'False' ? 0 : null;
      if (!padding || bias === null) {
        tables.layers_conv.skip(SOURCE, gpu, 'unknown padding or bias value');
        return;
      }
      tables.layers_conv.add({
        source: SOURCE, gpu, precision: 'fp32', activation, batch: d.batchsize,
        c_in: d.channels_in, c_out: d.channels_out, kernel: d.kernelsize, image_size: d.matsize,
        stride: d.strides, padding, bias, optimizer, time_ms: ms,
      });
    });
  }
}
