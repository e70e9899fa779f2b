// cuDNN frontend SDPA benchmark CSVs (models/data-tools/cudnn-sdpa.mjs) become fused-attention rows:
// both file layouts (current results/ and older artifacts/), fwd and bwd split, failed runs and
// devices without a catalogue entry counted, unknown devices and masks stop the build. The CSVs are
// written by the test in the upstream column layouts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCudnnSdpa, makeAttentionTable } from '../../models/data-tools/cudnn-sdpa.mjs';

const NEW = 'config_name,model_name,backend,data_type,attn_mask,batch_size,q_seqlen,kv_seqlen,num_q_heads,num_kv_heads,head_dim_qk,head_dim_vo,profile_pass,deterministic_bwd,time_ms,tflops,max_diff,num_iterations,sliding_window_size,success,error_message,gpu_name,cudnn_version,cudnn_backend_version';
const BOTH = 'config_name,model_name,backend,data_type,attn_mask,batch_size,q_seqlen,kv_seqlen,num_q_heads,num_kv_heads,head_dim_qk,head_dim_vo,profile_pass,deterministic_bwd,fwd_time_ms,bwd_time_ms,fwd_tflops,bwd_tflops,max_diff,num_iterations,sliding_window_size,success,error_message,gpu_name,cudnn_version,cudnn_backend_version';
const OLD = 'batch_size,q_seqlen,kv_seqlen,num_q_heads,num_kv_heads,head_dim,is_causal,backend,forward_time,backward_time,fwd_tflops_per_sec,bwd_tflops_per_sec';

/** @param {Record<string, string[]>} files relative path -> lines */
function build(files) {
  const dir = mkdtempSync(join(tmpdir(), 'cudnn-sdpa-'));
  try {
    for (const [rel, lines] of Object.entries(files)) {
      const p = join(dir, rel);
      mkdirSync(join(p, '..'), { recursive: true });
      writeFileSync(p, lines.join('\n') + '\n');
    }
    const table = makeAttentionTable();
    buildCudnnSdpa(dir, table);
    return table;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('both layouts, passes split, exclusions and failures counted', () => {
  const t = build({
    'head/results/llama/gb200/x.csv': [NEW, 'l,l,cudnn,bfloat16,top_left,2,32768,32768,64,8,128,128,fwd,False,21.692,1622,0,10,,True,,NVIDIA GB200,1.21.1,92200'],
    'head/results/h200/y.csv': [
      BOTH,
      'l,l,cudnn,bfloat16,top_left,1,32768,32768,64,8,128,128,both,False,25.566,75.688,688,581,0,10,,True,,NVIDIA H200,1.19.0,91901',
      'g,g,cudnn,fp8,top_left,2,8192,8192,64,8,64,64,both,True,1.5,4.5,1,1,0,10,128,True,,NVIDIA H200,1.19.0,91901',
      'g,g,cudnn,fp8,top_left,2,8192,8192,64,8,64,64,both,False,,,0,0,0,10,,False,oom,,1.19.0,91901',
    ],
    'old/norms.csv': ['config_name,norm_name,norm_type,backend', 'a,b,rms_norm,cudnn'],
    'old/sdpa_bf16_benchmark_results_NVIDIA_B200.csv': [OLD, '1,512,512,128,8,128,True,pyt_math,0.692,inf,12.4,0', '1,512,512,128,8,128,True,flash_attention,0.1,0.2,1,1'],
  });
  const rows = t.rows.map((r) => r.join(','));
  assert.ok(rows.includes('cudnn,h200,bf16,fwd,1,32768,32768,64,8,128,128,1,0,0,25.566'));
  assert.ok(rows.includes('cudnn,h200,bf16,bwd,1,32768,32768,64,8,128,128,1,0,0,75.688'));
  assert.ok(rows.includes('cudnn,h200,fp8,bwd,2,8192,8192,64,8,64,64,1,128,1,4.5'));
  assert.ok(rows.includes('cudnn,h200,fp8,fwd,2,8192,8192,64,8,64,64,1,128,0,1.5'));
  assert.ok(rows.includes('fa2,b200,bf16,bwd,1,512,512,128,8,128,128,1,0,0,0.2'));
  assert.ok(rows.includes('pyt-math,b200,bf16,fwd,1,512,512,128,8,128,128,1,0,0,0.692'));
  assert.ok(rows.includes('cudnn,gb200,bf16,fwd,2,32768,32768,64,8,128,128,1,0,0,21.692'));
  assert.equal(rows.length, 8);
  assert.deepEqual(Object.fromEntries(t.entry('cudnn', '(none)').skipped), { 'run failed (success=False)': 1 });
  assert.equal([...t.entry('pyt-math', 'b200').skipped.keys()].length, 1);
});

test('unknown devices and masks stop the build', () => {
  assert.throws(() => build({ 'a.csv': [NEW, 'l,l,cudnn,bfloat16,top_left,1,1,1,1,1,1,1,fwd,False,1,1,0,10,,True,,NVIDIA X9,1,1'] }), /unmapped device "NVIDIA X9"/);
  assert.throws(() => build({ 'a.csv': [NEW, 'l,l,cudnn,bfloat16,bottom_right,1,1,1,1,1,1,1,fwd,False,1,1,0,10,,True,,NVIDIA H200,1,1'] }), /unknown attn_mask/);
});
