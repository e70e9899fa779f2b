// Shared by the Node tests: the real engine over the built wasm, and the example request.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CORE_URL, engine } from '../../web/cli/node-engine.mjs';

export { engine };

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = fileURLToPath(new URL('../../web/cli/prenet.mjs', import.meta.url));

/** The link base's accelerators (scenario.js defaultScenario; the first screen's are startScenario's); catalogue ids that must exist. */
export const HARDWARE = ['a100-sxm4-80gb', 'h100-sxm', 'v100-sxm2-32gb'];

/** The presets docs and the page rely on. */
export const EXPECTED_PRESETS = ['vgg16', 'resnet50', 'bert-base', 'bert-large', 'gpt2', 'gpt2-large'];

/** Fails the calling test with the command that fixes it, rather than an import error. */
export function requireBuiltCore() {
  assert.ok(
    existsSync(fileURLToPath(CORE_URL)),
    `the wasm core is not built (${fileURLToPath(CORE_URL)}); run: npm run build:wasm`,
  );
}

/**
 * @param {Partial<import('../../web/src/types').TrainingSpec>} [training]
 * @returns {import('../../web/src/types').PredictRequest}
 */
export function exampleRequest(training = {}) {
  return {
    model: { preset: 'bert-base' },
    training: { batch_size: 32, precision: 'fp32', optimizer: 'adam', ...training },
    hardware: [...HARDWARE],
  };
}

/**
 * Relative tolerance for the response identities of docs/API.md (step = forward + backward +
 * optimizer, epoch_s = steps × step_ms / 1000, total_s = epoch_s × epochs, cost). The core rounds only
 * the measured parts and derives every total from them, so 1e-9 allows only floating-point noise.
 */
export const IDENTITY_TOLERANCE = 1e-9;

/**
 * |actual - expected| ≤ rel × |expected|, with a message that shows both.
 * @param {number} actual
 * @param {number} expected
 * @param {number} rel
 * @param {string} what
 */
export function assertClose(actual, expected, rel, what) {
  const tolerance = rel * Math.abs(expected);
  assert.ok(
    Math.abs(actual - expected) <= tolerance,
    `${what}: got ${actual}, expected ${expected} (relative tolerance ${rel})`,
  );
}
