// The comparison table: one row per accelerator, sortable by any column (a button in each header,
// aria-sort on the sorted one). The columns that decide (step, total, memory, fits, cost, MFU,
// bottleneck) are always shown, compact enough to fit 1280 px; the rest (roofline step, epoch, the
// parts of step, memory and kernel time) are details on demand: the accelerator's name is a button
// that opens a detail row below it. The same facts (result-facts.ts) feed the phone cards
// (result-cards.ts). Text only (textContent), never HTML.

import { byId, element } from './dom';
import { renderCards, wireCardSort } from './result-cards';
import { best, detailList, fillFact, mainFacts, nameBadges, type Context } from './result-facts';
import type { Sort, SortColumn } from './scenario.js';
import { sortResults } from './sort.js';
import type { HardwareResult, PredictResponse } from './types';

export { best };

/** Accelerators whose detail row is open; kept across re-renders (typing, sorting). */
const openDetails = new Set<string>();

function detailsId(hardware: string): string {
  return `details-${hardware}`;
}

/** Opens or closes one accelerator's detail row, keeping the button's aria-expanded in step. */
function toggleDetails(button: HTMLButtonElement, detailRow: HTMLTableRowElement, hardware: string): void {
  const open = detailRow.hidden;
  detailRow.hidden = !open;
  button.setAttribute('aria-expanded', String(open));
  if (open) openDetails.add(hardware);
  else openDetails.delete(hardware);
}

/** The main row and its (hidden unless opened) detail row. */
function resultRows(result: HardwareResult, context: Context, columns: number): [HTMLTableRowElement, HTMLTableRowElement] {
  const row = element('tr');
  row.dataset.hardware = result.hardware;
  const detailRow = element('tr', undefined, 'result-details');
  detailRow.id = detailsId(result.hardware);
  detailRow.dataset.detailsFor = result.hardware;
  const detailCell = element('td');
  detailCell.colSpan = columns;
  detailCell.append(detailList(result));
  detailRow.append(detailCell);
  detailRow.hidden = !openDetails.has(result.hardware);

  const name = element('th');
  name.scope = 'row';
  name.title = result.custom ? 'custom accelerator' : result.hardware;
  const toggle = element('button', undefined, 'row-toggle');
  toggle.type = 'button';
  toggle.setAttribute('aria-expanded', String(!detailRow.hidden));
  toggle.setAttribute('aria-controls', detailRow.id);
  toggle.append(element('span', result.name));
  toggle.addEventListener('click', () => toggleDetails(toggle, detailRow, result.hardware));
  name.append(toggle, ...nameBadges(result, context));

  row.append(name, ...mainFacts(result, context).map((fact) => fillFact(element('td'), fact)));
  return [row, detailRow];
}

/** Marks the sorted column (aria-sort drives both screen readers and the arrow drawn by CSS). */
function markSorted(table: HTMLTableElement, sort: Sort): void {
  for (const th of table.tHead?.querySelectorAll<HTMLTableCellElement>('th[data-sort]') ?? []) {
    if (th.dataset.sort === sort.column) th.setAttribute('aria-sort', sort.descending ? 'descending' : 'ascending');
    else th.removeAttribute('aria-sort');
  }
}

/** The table and the phone cards, from one response in one order. @param calibratedOn the accelerator the user's measured step was taken on, if any */
export function renderTable(response: PredictResponse, sort: Sort, calibratedOn?: string): void {
  const table = byId('results', HTMLTableElement);
  const body = table.tBodies[0];
  if (body === undefined) throw new Error('page is missing the results <tbody>');
  const context: Context = {
    bestTotal: best(response.results, (r) => r.total_s),
    bestCost: best(response.results, (r) => r.cost_usd),
    calibratedOn,
    learnedResponse: response.predictor === 'learned',
  };
  const columns = table.tHead?.rows[0]?.cells.length ?? 1;
  const sorted = sortResults(response.results, sort);
  body.replaceChildren(...sorted.flatMap((result) => resultRows(result, context, columns)));
  markSorted(table, sort);
  renderCards(sorted, context, sort);
}

/**
 * Header buttons: a click sorts by that column, ascending first; a second click reverses. The
 * cards' sort select (phones) sorts the same way.
 * @param onSort gets the new sort, and re-renders
 */
export function wireSorting(current: () => Sort, onSort: (sort: Sort) => void): void {
  const table = byId('results', HTMLTableElement);
  table.tHead?.addEventListener('click', (event) => {
    const th = (event.target as Element | null)?.closest<HTMLTableCellElement>('th[data-sort]');
    if (!th?.dataset.sort) return;
    const column = th.dataset.sort as SortColumn;
    const sort = current();
    onSort({ column, descending: sort.column === column ? !sort.descending : false });
  });
  wireCardSort(table, onSort);
}
