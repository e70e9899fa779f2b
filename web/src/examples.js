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
      batch: '4',
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
