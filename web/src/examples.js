// Example scenarios (issue 19: the fine-tunes people most often ask about), as link parameters: the page
// lists them as links beside the model picker, and `prenet --help` prints them as commands (the names
// mapped to flags through the core's tables). Data only: a link's names are the catalogue's `link`
// names (docs/EMBED.md, "Link parameters"), so an example means the same on the page, in an iframe, in
// the element's attributes and on the command line.

/**
 * @typedef {{ title: string, params: Readonly<Record<string, string>> }} Example
 */

/** @type {readonly Example[]} */
export const EXAMPLES = [
  {
    // Gradient checkpointing and FlashAttention, as QLoRA recipes run it: without them the activations of
    // 2 x 2048 tokens alone outgrow the card's 24 GB.
    title: 'Llama 3.1 8B QLoRA on one RTX 4090',
    params: {
      preset: 'llama-3.1-8b',
      hardware: 'rtx-4090',
      precision: 'bf16',
      finetune: 'qlora',
      lora_rank: '16',
      lora_targets: 'all-linear',
      batch: '2',
      seq_len: '2048',
      attention: 'flash',
      recompute: 'full',
    },
  },
  {
    title: 'Qwen3-8B LoRA on one H100',
    params: {
      preset: 'qwen3-8b',
      hardware: 'h100-sxm',
      precision: 'bf16',
      finetune: 'lora',
      lora_rank: '16',
      batch: '2',
      seq_len: '2048',
      attention: 'flash',
    },
  },
  {
    // 70B parameters' full states (16 bytes each) are 140 GB per GPU even sharded eight ways: the optimizer
    // states go to host memory (ZeRO-Offload).
    title: 'Full fine-tune of Llama 3.1 70B on 8 H100 with FSDP and CPU offload',
    params: {
      preset: 'llama-3.1-70b',
      hardware: 'h100-sxm',
      gpus: '8',
      zero: '3',
      recompute: 'full',
      precision: 'bf16',
      batch: '8',
      seq_len: '2048',
      attention: 'flash',
      offload: 'optimizer',
    },
  },
];

/**
 * @typedef {Example & { description: string }} Start a starting scenario of the gallery above the page
 *   (issue 21): an example with one line saying what it shows
 */

/**
 * The gallery of starting scenarios, shown as cards at the top of the page (gallery.ts). Each is a link
 * like the examples; the layouts are the ones plan mode ranks fastest for these budgets (checked in
 * tests/js/gallery.test.mjs: each gives a prediction that fits).
 * @type {readonly Start[]}
 */
export const GALLERY = [
  {
    // 1T tokens at 512 x 4096 per step (2M tokens, Llama's batch order). FSDP over all 64 GPUs with micro-
    // batches of 2 is plan mode's fastest layout at this budget (`prenet plan --tokens 1e12 --max-gpus 64`).
    title: 'Pre-train an 8B model on 64 H100',
    description: 'Llama 3.1 8B from scratch on 1T tokens, FSDP over 64 GPUs, BF16',
    params: {
      preset: 'llama-3.1-8b',
      hardware: 'h100-sxm',
      precision: 'bf16',
      optimizer: 'adamw',
      batch: '512',
      seq_len: '4096',
      attention: 'flash',
      dataset_size: '244140625',
      gpus: '64',
      zero: '3',
      micro_batch: '2',
    },
  },
  {
    // 16 GB of BF16 weights leave 8 GB: one sample of 2048 tokens at a time (two accumulated), gradient
    // checkpointing and FlashAttention.
    title: 'LoRA an 8B model on one RTX 4090',
    description: 'Llama 3.1 8B, LoRA r16 on a BF16 base, 2 × 2048 tokens per step on a 24 GB card',
    params: {
      preset: 'llama-3.1-8b',
      hardware: 'rtx-4090',
      precision: 'bf16',
      optimizer: 'adamw',
      finetune: 'lora',
      lora_rank: '16',
      batch: '2',
      seq_len: '2048',
      attention: 'flash',
      micro_batch: '1',
      recompute: 'full',
    },
  },
  {
    // 128 experts sharded 8 ways (all-to-all inside a node), ZeRO 3 over the data group; 1024 x 4096 tokens
    // (4M) per step, 1T tokens.
    title: 'A MoE model on 256 GPUs',
    description: 'Qwen3 30B-A3B pre-training on 256 H100 with expert parallelism 8 and ZeRO 3',
    params: {
      preset: 'qwen3-30b-a3b',
      hardware: 'h100-sxm',
      precision: 'bf16',
      optimizer: 'adamw',
      batch: '1024',
      seq_len: '4096',
      attention: 'flash',
      dataset_size: '244140625',
      gpus: '256',
      expert: '8',
      zero: '3',
      micro_batch: '2',
      recompute: 'selective',
    },
  },
  {
    // The classic recipe: 90 epochs of ImageNet-1k (1,281,167 images), SGD with momentum, batch 256, BF16,
    // channels-last; one GPU of three kinds side by side.
    title: 'ResNet-50 on one GPU',
    description: 'ImageNet, 90 epochs at batch 256 in BF16, on one H100, L40S or RTX 4090',
    params: {
      preset: 'resnet50',
      hardware: 'h100-sxm,l40s,rtx-4090',
      precision: 'bf16',
      optimizer: 'momentum',
      batch: '256',
      memory_format: 'channels_last',
      dataset_size: '1281167',
      epochs: '90',
    },
  },
];

/**
 * An example's link parameters (the hash of a page link: `#${exampleParams(e)}`).
 * @param {Example} example
 */
export function exampleParams(example) {
  return new URLSearchParams(Object.entries(example.params));
}

/**
 * An example as a `prenet predict` command line: each parameter as the flag of the table row whose link
 * names it (`lora_rank` -> `--lora-rank 16`, a switch bare when on), preset and hardware as themselves.
 * @param {Example} example
 * @param {readonly { link: readonly string[], flag: string | null, kind: string }[]} rows the catalogue's
 *   training options and parallel fields
 * @returns {string}
 */
export function exampleCommand(example, rows) {
  const words = ['prenet', 'predict'];
  for (const [name, value] of Object.entries(example.params)) {
    if (name === 'preset' || name === 'hardware') {
      words.push(`--${name}`, value);
      continue;
    }
    const row = rows.find((candidate) => candidate.link.includes(name));
    if (row === undefined || row.flag === null) throw new Error(`example "${example.title}": ${name} has no flag`);
    if (row.kind === 'boolean') {
      if (value === '1') words.push(row.flag);
    } else words.push(row.flag, value);
  }
  return words.join(' ');
}
