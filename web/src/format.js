// Number formatting shared by the page and the CLI. Plain JavaScript with JSDoc types (see engine.js
// for why) so the Node tests exercise the same code. Locale is fixed to en-US so that output, and
// the tests that read it, do not depend on the machine.

const SIG3 = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 3 });
// One formatter, made once: toLocaleString with options builds a new one on every call.
const CENTS = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** Three significant digits, grouped: 0.0123, 12.3, 12,300. */
export function sig3(/** @type {number} */ x) {
  return SIG3.format(x);
}

/** @type {ReadonlyArray<readonly [number, string]>} largest first: seconds per unit, label */
const DURATION_UNITS = [
  [86400, 'days'],
  [3600, 'h'],
  [60, 'min'],
  [1, 's'],
];

/**
 * A duration in the largest unit that keeps the number ≥ 1: "12.3 ms", "4.2 s", "3.5 min",
 * "2.1 h", "3.4 days".
 * @param {number} seconds
 */
export function formatDuration(seconds) {
  if (!Number.isFinite(seconds)) return '—';
  for (const [size, label] of DURATION_UNITS) {
    if (seconds >= size) return `${sig3(seconds / size)} ${label}`;
  }
  return `${sig3(seconds * 1000)} ms`;
}

/** @param {number} ms */
export function formatMs(ms) {
  return formatDuration(ms / 1000);
}

const SI_PREFIXES = ['', 'k', 'M', 'G', 'T', 'P', 'E', 'Z'];

/**
 * Large counts with an SI prefix: formatSI(3.0e12, 'FLOP') → "3 TFLOP".
 * @param {number} value
 * @param {string} [unit]
 */
export function formatSI(value, unit = '') {
  if (!Number.isFinite(value)) return '—';
  let scaled = value;
  let index = 0;
  while (Math.abs(scaled) >= 1000 && index < SI_PREFIXES.length - 1) {
    scaled /= 1000;
    index += 1;
  }
  const space = unit || SI_PREFIXES[index] ? ' ' : '';
  return `${sig3(scaled)}${space}${SI_PREFIXES[index]}${unit}`;
}

/** @param {number} gb */
export function formatGB(gb) {
  return Number.isFinite(gb) ? `${sig3(gb)} GB` : '—';
}

/** @param {number | null | undefined} usd null when the accelerator has no price (docs/API.md) */
export function formatCost(usd) {
  if (usd === null || usd === undefined || !Number.isFinite(usd)) return '—';
  if (usd >= 1) return `$${CENTS.format(usd)}`;
  return `$${sig3(usd)}`;
}

/** @param {number} fraction 0.41 → "41 %" */
export function formatPercent(fraction) {
  return Number.isFinite(fraction) ? `${sig3(fraction * 100)} %` : '—';
}

/**
 * An interval in one unit where both ends share it: "9.8–15.1 ms", else "980 ms–1.5 s".
 * @param {number} low
 * @param {number} high
 * @param {(value: number) => string} format formatMs or formatDuration
 */
export function formatRange(low, high, format) {
  const a = format(low);
  const b = format(high);
  const unitA = a.slice(a.indexOf(' '));
  return unitA === b.slice(b.indexOf(' ')) ? `${a.slice(0, a.indexOf(' '))}–${b}` : `${a}–${b}`;
}

/**
 * Memory used against the device's, in one unit: "7.2 / 80 GB"; without a device size, formatGB.
 * @param {number} usedGb
 * @param {number | undefined} deviceGb
 */
export function formatGBOf(usedGb, deviceGb) {
  if (deviceGb === undefined || !Number.isFinite(deviceGb)) return formatGB(usedGb);
  return Number.isFinite(usedGb) ? `${sig3(usedGb)} / ${sig3(deviceGb)} GB` : '—';
}
