// Ordering of result rows for the comparison table and the embed. Plain JS with JSDoc types (see
// engine.js) so the Node tests cover it.

/**
 * @typedef {import('./types').HardwareResult} HardwareResult
 * @typedef {import('./scenario.js').Sort} Sort
 */

/**
 * The comparable value of a row in a column: numbers for numeric columns, text for the rest. A
 * missing value (no price, so no cost) is null and always sorts last, whatever the direction.
 * @param {HardwareResult} result
 * @param {Sort['column']} column
 * @returns {number | string | null}
 */
function keyOf(result, column) {
  switch (column) {
    case 'name':
      return result.name.toLowerCase();
    case 'bottleneck':
      return result.bottleneck;
    case 'fits':
      return result.fits ? 0 : 1; // ascending: the ones that fit first
    case 'cost_usd':
      return result.cost_usd;
    default:
      return result[column];
  }
}

/**
 * A sorted copy; ties keep the input order, so equal rows do not jump around while typing.
 * @param {readonly HardwareResult[]} results
 * @param {Sort} sort
 */
export function sortResults(results, sort) {
  const direction = sort.descending ? -1 : 1;
  return results
    .map((result, index) => ({ result, index, key: keyOf(result, sort.column) }))
    .sort((a, b) => {
      if (a.key === null || b.key === null) return (a.key === null ? 1 : 0) - (b.key === null ? 1 : 0) || a.index - b.index;
      const order = typeof a.key === 'string' ? a.key.localeCompare(String(b.key)) : a.key - Number(b.key);
      return order * direction || a.index - b.index;
    })
    .map(({ result }) => result);
}

/**
 * The Plan panel's rows: each accelerator's fastest layouts (or its cheapest, by cost; an accelerator
 * without a price brings its fastest, after every priced one), merged into one ranking; ties are
 * broken by time and then by the core's order.
 * @param {import('./types').PlanResponse} response
 * @param {import('./scenario.js').PlanRank} rank
 * @returns {import('./types').PlanRow[]}
 */
export function rankLayouts(response, rank) {
  const rows = response.results.flatMap((r) =>
    (rank === 'cost' && r.by_cost.length > 0 ? r.by_cost : r.by_time).map((layout) => ({ ...layout, hardware: r.hardware, name: r.name, device_memory_gb: r.device_memory_gb })),
  );
  /** @param {import('./types').PlanRow} row */
  const key = (row) => (rank === 'cost' ? (row.cost_usd ?? Infinity) : row.total_s);
  return rows
    .map((row, index) => ({ row, index }))
    .sort((a, b) => key(a.row) - key(b.row) || a.row.total_s - b.row.total_s || a.index - b.index)
    .map(({ row }) => row);
}
