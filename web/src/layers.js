// The per-layer chart shows the layers that take the most time and folds the others into one
// "rest" bar, so a 300-layer model still gives a readable chart whose bars add up to the step.
// Plain JS with JSDoc types (see engine.js) so the Node tests cover it.

/**
 * @typedef {import('./types').LayerTiming} LayerTiming
 * @typedef {import('./types').LayerInfo} LayerInfo
 * @typedef {import('./types').LayerColumns} LayerColumns
 * @typedef {{ name: string, forward_ms: number, backward_ms: number, optimizer_ms: number,
 *   total_ms: number, layers: number }} LayerBar one bar: a layer, or `layers` layers folded together
 */

/**
 * One result's per-layer timings as rows, one per layer of the response's table, read out of the
 * result's columns (docs/API.md: `layers[i].timing` is layer i's column).
 * @param {readonly LayerInfo[]} table the response's `layers`
 * @param {LayerColumns} columns the result's `layers`
 * @returns {LayerTiming[]}
 * @throws {Error} when a layer names a column the result does not have (a malformed response)
 */
export function layerTimings(table, columns) {
  return table.map((layer, index) => {
    const k = layer.timing;
    const forward = columns.forward_ms[k];
    const backward = columns.backward_ms[k];
    const optimizer = columns.optimizer_ms[k];
    const compute = columns.compute_ms[k];
    const memory = columns.memory_ms[k];
    const ct = columns.ct_ms[k];
    const bound = columns.bound[k];
    if (forward === undefined || backward === undefined || optimizer === undefined || compute === undefined || memory === undefined || ct === undefined || bound === undefined) {
      throw new Error(`layers[${index}].timing: column ${k} is not in the result's per-layer columns`);
    }
    return { name: layer.name, forward_ms: forward, backward_ms: backward, optimizer_ms: optimizer, compute_ms: compute, memory_ms: memory, ct_ms: ct, bound };
  });
}

/** @param {LayerTiming} layer */
function totalOf(layer) {
  return layer.forward_ms + layer.backward_ms + layer.optimizer_ms;
}

/**
 * The `count` slowest layers (slowest first; ties keep model order) and, when layers are left
 * over, one "rest" bar summing them.
 * @param {readonly LayerTiming[]} layers
 * @param {number} count at least 1
 * @returns {{ bars: LayerBar[], rest: LayerBar | null, total_ms: number }}
 */
export function topLayers(layers, count) {
  const ranked = layers
    .map((layer, index) => ({ layer, index, total: totalOf(layer) }))
    .sort((a, b) => b.total - a.total || a.index - b.index);
  const keep = Math.max(1, Math.floor(count));
  const bars = ranked.slice(0, keep).map(({ layer, total }) => ({
    name: layer.name,
    forward_ms: layer.forward_ms,
    backward_ms: layer.backward_ms,
    optimizer_ms: layer.optimizer_ms,
    total_ms: total,
    layers: 1,
  }));
  const others = ranked.slice(keep);
  /** @type {LayerBar | null} */
  let rest = null;
  if (others.length > 0) {
    rest = { name: `${others.length} other layer${others.length === 1 ? '' : 's'}`, forward_ms: 0, backward_ms: 0, optimizer_ms: 0, total_ms: 0, layers: others.length };
    for (const { layer, total } of others) {
      rest.forward_ms += layer.forward_ms;
      rest.backward_ms += layer.backward_ms;
      rest.optimizer_ms += layer.optimizer_ms;
      rest.total_ms += total;
    }
  }
  const total_ms = ranked.reduce((sum, { total }) => sum + total, 0);
  return { bars, rest, total_ms };
}
