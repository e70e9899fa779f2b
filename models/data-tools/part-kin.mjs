// Which catalogue parts take a measured GPU's fit of a chunk kernel (models/fit-delta-rule.mjs, models/fit-ssd.mjs):
// the parts of the same die, SM count and clocks as the measured GPU (the kernels do not scale with memory), and the
// unmeasured parts of its SM architecture (Blackwell Ultra: the same SM, 160 of them at other clocks, the same 16-bit
// tensor peak), which take it because those kernels do not follow the parts' peaks (each fit says why).

/** Groups of parts with the same die, SM count and clocks. */
const SAME_DIE = [['h200', 'h100-sxm', 'gh200'], ['b200', 'gb200']];
/** Unmeasured parts of each die group's SM architecture, by the group's first part. */
const SAME_SM = /** @type {Readonly<Record<string, string[]>>} */ ({ b200: ['b300', 'gb300'] });

/**
 * The parts that take `gpu`'s fit, itself first, each with what its catalogue `source` adds to the fit's (empty for
 * `gpu` itself).
 * @returns {{id: string, note: string}[]}
 */
export function partsTakingFit(/** @type {string} */ gpu) {
  const group = SAME_DIE.find((g) => g.includes(gpu)) ?? [gpu];
  return [
    { id: gpu, note: '' },
    ...group.filter((id) => id !== gpu).map((id) => ({ id, note: `; ${gpu}'s fit (same die and clocks)` })),
    ...(SAME_SM[group[0] ?? gpu] ?? []).map((id) => ({
      id, note: `; ${gpu}'s fit (the same SM architecture, not measured)`,
    })),
  ];
}
