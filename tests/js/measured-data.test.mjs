// The project's own GPU measurements (models/measured/<gpu>/, written by models/measure/measure_gpu.py)
// join the training tables through models/data-tools/measured.mjs: each file type lands in the right
// table under the right source, unusable rows are counted, and mix-ups stop the build with the file
// and line named. The CSVs here are written in measure_gpu.py's column layout by the test itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { buildMeasured } from '../../models/data-tools/measured.mjs';
import { makeTables } from '../../models/data-tools/table.mjs';

const CONV_HEADER = 'source,gpu,precision,direction,batch,c_in,c_out,kernel_h,kernel_w,in_h,in_w,stride_h,stride_w,pad_h,pad_w,time_ms,reps';
const STREAM_HEADER = 'source,gpu,precision,table,op,elements,rows,cols,time_ms,reps';
const LAYERS_HEADER =
  'source,gpu,precision,layer,activation,batch,d_in,d_out,c_in,c_out,kernel,image_size,stride,padding,bias,optimizer,forward_ms,backward_ms,optimizer_ms,step_ms,reps';
const LAYERS_ROW = 'prenet-layer,h200,fp32,dense,relu,20,895,174,,,,,,,,none,0.02,,,0.02,15';

/** @typedef {Record<string, string[]>} Files file name -> lines (header first) */

/** @type {Files} */
const FILES = {
  'gemm.csv': [
    'source,gpu,precision,batch,m,n,k,trans_a,trans_b,time_ms,reps',
    'prenet-linear,h200,fp32,1,1954,22603,323,0,1,0.41,15',
    'prenet-bmm,h200,bf16,12,128,128,64,0,0,0.012,15',
    'prenet-gemm,h200,tf32,1,35,8457,1760,1,0,0.03,15',
    'prenet-gemm,h200,tf32,1,35,8457,1760,0,0,,15',
  ],
  'conv.csv': [
    CONV_HEADER,
    'prenet-conv,h200,bf16,bwd_filter,16,64,64,3,3,56,56,1,1,1,1,0.05,15',
  ],
  'stream.csv': [
    STREAM_HEADER,
    'prenet-pow,h200,fp32,elementwise,pow,1000,,,0.004,15',
    'prenet-gelu,h200,bf16,elementwise,gelu,1000,,,0.004,15',
    'prenet-softmax,h200,fp32,normalization,softmax,4096,4,1024,0.006,15',
  ],
  'layers.csv': [
    LAYERS_HEADER,
    LAYERS_ROW,
    'prenet-layer,h200,fp32,dense,relu,20,895,174,,,,,,,,adam,0.03,0.04,0.05,0.12,12',
    'prenet-layer,h200,bf16,conv,tanh,8,,,3,16,3,32,2,same,0,sgd,0.03,0.04,0.01,0.08,12',
  ],
};

/**
 * A measured root holding one folder `gpu` with meta naming `metaGpu` and the files above, `replace`d
 * file by file (each replacement's lines are the whole file).
 * @param {Files} [replace]
 */
function fixture(gpu = 'h200', metaGpu = gpu, replace = {}) {
  const root = mkdtempSync(join(tmpdir(), 'measured-'));
  const dir = join(root, gpu);
  mkdirSync(dir);
  writeFileSync(join(dir, 'meta.json'), JSON.stringify({ gpu: metaGpu, torch: 'test' }));
  for (const [name, lines] of Object.entries({ ...FILES, ...replace })) {
    const text = `${lines.join('\n')}\n`;
    // The large files may be committed gzipped: exercise that path with one of them.
    if (name === 'gemm.csv') writeFileSync(join(dir, `${name}.gz`), gzipSync(text));
    else writeFileSync(join(dir, name), text);
  }
  return root;
}

const ids = new Set(['h200', 'a100-pcie-40gb']);

test('measured rows land in the training tables under prenet-* sources', (t) => {
  const root = fixture();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const tb = makeTables();
  assert.deepEqual(buildMeasured(root, tb, ids), ['h200']);
  assert.deepEqual(tb.gemm.rows.map((r) => [r[0], r[2], r[3]]), [['prenet-linear', 'fp32', 1], ['prenet-bmm', 'bf16', 12], ['prenet-gemm', 'tf32', 1]]);
  assert.deepEqual([...(tb.gemm.stats.get('prenet-gemm\th200')?.skipped ?? [])], [['missing time', 1]]);
  assert.deepEqual(tb.conv.rows[0]?.slice(0, 5), ['prenet-conv', 'h200', 'bf16', 'bwd_filter', 16]);
  // pow reads two tensors, gelu one (the NeuSight table's convention).
  assert.deepEqual(tb.elementwise.rows.map((r) => [r[3], r[5]]), [['pow', 2], ['gelu', 1]]);
  assert.deepEqual(tb.normalization.rows[0], ['prenet', 'h200', 'fp32', 'softmax', 4, 1024, 0.006]);
  // A forward-only row keeps its forward time; a training row its whole step, not the sum of parts.
  assert.deepEqual(tb.layers_dense.rows.map((r) => [r[7], r[8]]), [['none', 0.02], ['adam', 0.12]]);
  assert.deepEqual(tb.layers_conv.rows[0], ['prenet-layer', 'h200', 'bf16', 'tanh', 8, 3, 16, 3, 32, 2, 'same', 0, 'sgd', 0.08]);
});

test('no measured folder adds nothing', () => {
  const tb = makeTables();
  assert.deepEqual(buildMeasured(join(tmpdir(), 'no-such-measured-folder'), tb, ids), []);
  assert.equal(tb.gemm.rows.length, 0);
});

test('mix-ups stop the build naming the file and line', async (t) => {
  const cases = [
    { root: fixture('h100-nvl'), error: /folder name "h100-nvl" is not a catalogue id/ },
    { root: fixture('h200', 'a100-pcie-40gb'), error: /meta\.json: gpu "a100-pcie-40gb" in the folder of h200/ },
    {
      root: fixture('h200', 'h200', { 'conv.csv': [CONV_HEADER, 'prenet-conv,a100-pcie-40gb,bf16,fwd,16,64,64,3,3,56,56,1,1,1,1,0.05,15'] }),
      error: /conv\.csv:2: gpu "a100-pcie-40gb" in the folder of h200/,
    },
    {
      root: fixture('h200', 'h200', { 'stream.csv': [STREAM_HEADER, 'prenet-exp,h200,fp32,elementwise,exp,10,,,0.1,3'] }),
      error: /stream\.csv:2: unknown elementwise op "exp"/,
    },
    {
      root: fixture('h200', 'h200', { 'layers.csv': [LAYERS_HEADER.replace(',step_ms', ''), LAYERS_ROW] }),
      error: /layers\.csv: line 2 has 21 fields, header has 20/,
    },
  ];
  for (const c of cases) {
    t.after(() => rmSync(c.root, { recursive: true, force: true }));
    assert.throws(() => buildMeasured(c.root, makeTables(), ids), c.error);
  }
});
