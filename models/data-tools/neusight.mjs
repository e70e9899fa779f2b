// NeuSight (sitar-lab/NeuSight @ 6945927): one PyTorch 2.1 op per row, forward only, strict FP32.
// Files: <shared>/ops/neusight/<op>/<gpu>.csv, `Latency` in ms.

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readCsvObjects } from './csv.mjs';
import { NEUSIGHT_DEVICES, mapDevice } from './gpus.mjs';
import { parseDim, parseTime } from './table.mjs';

const ELEMENTWISE = { add: 2, mul: 2, div: 2, pow: 2, relu: 1, gelu: 1, tanh: 1 };
const NORMALIZATION = { ln: 'layernorm', softmax: 'softmax' };

function files(dir) {
  if (!existsSync(dir)) throw new Error(`missing folder ${dir}`);
  return readdirSync(dir).filter((f) => f.endsWith('.csv')).sort();
}

/** Reads dims; returns an object of integers, or a skip reason naming the first bad column. */
function dims(rec, names) {
  const out = {};
  for (const n of names) {
    const v = parseDim(rec[n]);
    if (v === null) return { reason: `missing or non-integer ${n}` };
    out[n] = v;
  }
  return { out };
}

/** One NeuSight file: maps the device, validates latency and dims, hands each good row to emit. */
function eachRow(path, table, source, dimNames, emit) {
  const { header, records } = readCsvObjects(path);
  for (const col of ['Latency', 'Device', ...dimNames]) {
    if (!header.includes(col)) throw new Error(`${path}: column ${col} missing`);
  }
  for (const rec of records) {
    const gpu = mapDevice(NEUSIGHT_DEVICES, rec.Device, `${path}:${rec.__line}`);
    table.countRaw(source, gpu);
    const t = parseTime(rec.Latency);
    if (t.reason) {
      table.skip(source, gpu, t.reason);
      continue;
    }
    const d = dims(rec, dimNames);
    if (d.reason) {
      table.skip(source, gpu, d.reason);
      continue;
    }
    for (const n of dimNames) {
      if (d.out[n] === 0 && n !== 'Padding') {
        table.skip(source, gpu, `zero ${n}`);
        d.reason = true;
        break;
      }
    }
    if (d.reason) continue;
    emit(gpu, d.out, t.value, rec);
  }
}

export function buildNeusight(shared, tables) {
  const root = join(shared, 'ops', 'neusight');
  const { gemm, conv, elementwise, normalization } = tables;

  for (const f of files(join(root, 'linear'))) {
    eachRow(join(root, 'linear', f), gemm, 'neusight-linear', ['B', 'M', 'N', 'K'], (gpu, d, ms) => {
      if (d.B !== 1) {
        gemm.skip('neusight-linear', gpu, 'linear with B != 1');
        return;
      }
      // torch.nn.functional.linear: input (M x K) times weight^T, weight stored (N x K) -> trans_b = 1.
      gemm.add({ source: 'neusight-linear', gpu, precision: 'fp32', batch: 1, m: d.M, n: d.N, k: d.K, trans_a: 0, trans_b: 1, time_ms: ms });
    });
  }
  for (const f of files(join(root, 'bmm'))) {
    eachRow(join(root, 'bmm', f), gemm, 'neusight-bmm', ['B', 'M', 'N', 'K'], (gpu, d, ms) => {
      gemm.add({ source: 'neusight-bmm', gpu, precision: 'fp32', batch: d.B, m: d.M, n: d.N, k: d.K, trans_a: 0, trans_b: 0, time_ms: ms });
    });
  }

  const convCols = ['B', 'Input_Channel', 'Output_Channel', 'Kernel_Szie', 'Input_Size', 'Stride', 'Padding'];
  for (const f of files(join(root, 'conv'))) {
    eachRow(join(root, 'conv', f), conv, 'neusight', convCols, (gpu, d, ms) => {
      const out = Math.floor((d.Input_Size + 2 * d.Padding - d.Kernel_Szie) / d.Stride) + 1;
      if (out < 1) {
        conv.skip('neusight', gpu, 'kernel larger than padded input');
        return;
      }
      conv.add({
        source: 'neusight', gpu, precision: 'fp32', direction: 'fwd', batch: d.B,
        c_in: d.Input_Channel, c_out: d.Output_Channel, kernel_h: d.Kernel_Szie, kernel_w: d.Kernel_Szie,
        in_h: d.Input_Size, in_w: d.Input_Size, stride_h: d.Stride, stride_w: d.Stride,
        pad_h: d.Padding, pad_w: d.Padding, time_ms: ms,
      });
    });
  }

  for (const op of Object.keys(ELEMENTWISE)) {
    for (const f of files(join(root, op))) {
      eachRow(join(root, op, f), elementwise, 'neusight', ['B', 'H'], (gpu, d, ms, rec) => {
        // NeuSight's pow raises a tensor to a same-shaped tensor (kernel pow_tensor_tensor_kernel):
        // two inputs. A scalar exponent would be a different kernel; do not guess, skip and count.
        if (op === 'pow' && !String(rec['Kernel Name']).includes('pow_tensor_tensor')) {
          elementwise.skip('neusight', gpu, 'pow kernel is not tensor-tensor');
          return;
        }
        elementwise.add({ source: 'neusight', gpu, precision: 'fp32', op, elements: d.B * d.H, inputs: ELEMENTWISE[op], time_ms: ms });
      });
    }
  }

  for (const [dir, op] of Object.entries(NORMALIZATION)) {
    for (const f of files(join(root, dir))) {
      eachRow(join(root, dir, f), normalization, 'neusight', ['B', 'H'], (gpu, d, ms) => {
        normalization.add({ source: 'neusight', gpu, precision: 'fp32', op, rows: d.B, cols: d.H, time_ms: ms });
      });
    }
  }
}
