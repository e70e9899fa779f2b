// What the page (render.ts, main.ts) and the embedded element (embed.ts) both say about a response,
// decided here once; each surface words it for its space (a sentence on the page, a few words in
// the element).

import { finetuneSetting } from './training-fields.js';
import type { PredictResponse } from './types';

export { finetuneSetting };

/**
 * The training settings a summary names: precision, optimizer (and its kernels), fused attention, Megatron
 * kernels, and (unless `finetune` is false: the page gives it a row of its own) the fine-tune.
 */
export function trainingSettings(training: PredictResponse['training'], finetune = true): string[] {
  const settings = [training.precision, `${training.optimizer}${training.optimizer_impl === 'foreach' ? ' (foreach)' : ''}`];
  if (training.attention === 'flash') settings.push('fused attention');
  if (training.attention === 'flash2') settings.push('fused attention (FlashAttention-2)');
  if (training.kernels === 'megatron') settings.push('Megatron kernels');
  const tune = finetune ? finetuneSetting(training) : null;
  if (tune !== null) settings.push(tune);
  return settings;
}

/**
 * The caution a generic reading of a Hugging Face config needs (its model_type has no row in the table, so it
 * was read from a few of its fields), or null when the model was read by its row or came in another form.
 * `short`: the element's few words; otherwise the page's sentence.
 */
export function readingCaution(response: PredictResponse, short = false): string | null {
  const reading = response.model.reading;
  if (reading === undefined || reading.kind !== 'generic') return null;
  const type = reading.model_type === '' ? 'a config without model_type' : `model_type "${reading.model_type}"`;
  const style = reading.style === 'llama' ? 'a Llama-style decoder' : 'a GPT-2-style decoder';
  if (short) return `Caution: ${type} is not in the table; read generically as ${style}.`;
  return `Caution: ${type} is not in the table; read generically as ${style} from ${reading.relied_on.join(', ')}. Check the parameter count against the model's.`;
}

/**
 * Which predictor computed the numbers shown and why it is that one:
 * - `learned`: the learned models (`analyticRows`: some accelerators they do not cover are on the roofline);
 * - `roofline-asked`: the roofline, because it was asked for;
 * - `loading`: the roofline while the learned models load;
 * - `fallback`: the roofline although the learned models were asked for, because of `problem`, or
 *   (problem null) because they cover none of the accelerators (`analyticRows`) or are simply absent.
 */
export type PredictorState =
  | { kind: 'learned'; analyticRows: boolean }
  | { kind: 'roofline-asked' }
  | { kind: 'loading' }
  | { kind: 'fallback'; problem: string | null; analyticRows: boolean };

/**
 * @param asked whether the learned models were asked for
 * @param pending whether they are still loading
 * @param problem why they are not in use (the host's learned loader), or null
 */
export function predictorState(response: PredictResponse, asked: boolean, pending: boolean, problem: string | null): PredictorState {
  const analyticRows = response.results.some((r) => r.predictor === 'roofline');
  if (response.predictor === 'learned') return { kind: 'learned', analyticRows };
  if (!asked) return { kind: 'roofline-asked' };
  if (pending) return { kind: 'loading' };
  return { kind: 'fallback', problem, analyticRows };
}
