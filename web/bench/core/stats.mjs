// Small helpers for `npm run bench` (web/bench/bench-core.mjs): order statistics, timing and sizes.

import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

/** @param {number[]} values */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? NaN) : ((sorted[middle - 1] ?? NaN) + (sorted[middle] ?? NaN)) / 2;
}

/** @param {number[]} values @param {number} p percent, 0 to 100 */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

/** @param {() => unknown} fn @returns {number} milliseconds */
export function timeMs(fn) {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** @param {() => Promise<unknown>} fn @returns {Promise<number>} milliseconds */
export async function timeMsAsync(fn) {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** @param {string} file gzip -9 size in bytes */
export function gzipBytes(file) {
  return gzipSync(readFileSync(file), { level: 9 }).length;
}

/** @param {number} bytes */
export function size(bytes) {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(2)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;
}

/** @param {number} value milliseconds */
export function ms(value) {
  return `${value.toFixed(value < 10 ? 2 : 1)} ms`;
}

/** @param {boolean} ok */
export const verdict = (ok) => (ok ? 'met' : '**not met**');
