// The results on a phone: one card per accelerator with the same facts as the table's row (the
// same data-col / data-value), in the table's order, and a sort select that stands in for the
// table's header buttons. style.css shows the cards instead of the table on narrow screens; both
// are always rendered, so switching width never needs a recompute. Text only (textContent).

import { byId, element } from './dom';
import { detailList, fillFact, mainFacts, nameBadges, type Context } from './result-facts';
import type { Sort, SortColumn } from './scenario.js';
import { SORT_COLUMNS } from './scenario.js';
import type { HardwareResult } from './types';

/** Cards whose "More" is open; kept across re-renders, like the table's detail rows. */
const openMore = new Set<string>();

/** The table header's label of a column, so the cards name columns exactly as the table does. */
function columnLabel(column: string): string {
  const th = document.querySelector<HTMLElement>(`#results thead th[data-sort="${column}"]`);
  return th?.textContent?.trim() || column;
}

function card(result: HardwareResult, context: Context): HTMLLIElement {
  const item = element('li', undefined, 'result-card');
  item.dataset.hardware = result.hardware;
  const heading = element('h3');
  heading.append(element('span', result.name, 'card-name'), ...nameBadges(result, context));
  const facts = element('dl', undefined, 'card-facts');
  for (const fact of mainFacts(result, context)) {
    const pair = element('div');
    pair.append(element('dt', columnLabel(fact.col)), fillFact(element('dd'), fact));
    facts.append(pair);
  }
  const more = element('details', undefined, 'card-more');
  more.open = openMore.has(result.hardware);
  more.append(element('summary', 'More'), detailList(result));
  more.addEventListener('toggle', () => (more.open ? openMore.add(result.hardware) : openMore.delete(result.hardware)));
  item.append(heading, facts, more);
  return item;
}

/** The select's value for a sort: the link's spelling, "-cost_usd" for descending. */
function sortValue(sort: Sort): string {
  return `${sort.descending ? '-' : ''}${sort.column}`;
}

/** Where the cards replace the table: style.css's `@media (max-width: 40rem)`, the same width. */
const PHONE_LAYOUT = '(max-width: 40rem)';
let phoneLayout: MediaQueryList | undefined;
/** The latest cards not built yet because the table is what is shown. */
let unbuilt: (() => void) | null = null;

/** Builds deferred cards when the page narrows into the phone layout. */
function watchPhoneLayout(): MediaQueryList {
  const query = matchMedia(PHONE_LAYOUT);
  query.addEventListener('change', () => {
    const build = unbuilt;
    unbuilt = null;
    if (query.matches) build?.();
    else unbuilt = build;
  });
  return query;
}

/**
 * The cards, built only while they are shown (on a wide screen they would double every render's
 * work for nothing); otherwise kept as the next thing to build if the page narrows.
 * @param sorted the results in the table's order
 */
export function renderCards(sorted: readonly HardwareResult[], context: Context, sort: Sort): void {
  phoneLayout ??= watchPhoneLayout();
  const build = () => buildCards(sorted, context, sort);
  if (phoneLayout.matches) {
    unbuilt = null;
    build();
  } else unbuilt = build;
}

function buildCards(sorted: readonly HardwareResult[], context: Context, sort: Sort): void {
  byId('result-cards-list', HTMLOListElement).replaceChildren(...sorted.map((result) => card(result, context)));
  const select = byId('result-cards-sort', HTMLSelectElement);
  const value = sortValue(sort);
  // A sort without a header (epoch_s, from a link) gets an option of its own, so the select tells the truth.
  if (![...select.options].some((option) => option.value === value)) select.append(new Option(`${sort.column}${sort.descending ? ', descending' : ''}`, value));
  select.value = value;
}

/**
 * Fills the cards' sort select from the table's sortable headers (each column ascending and
 * descending) and sorts on change.
 */
export function wireCardSort(table: HTMLTableElement, onSort: (sort: Sort) => void): void {
  const select = byId('result-cards-sort', HTMLSelectElement);
  for (const th of table.tHead?.querySelectorAll<HTMLTableCellElement>('th[data-sort]') ?? []) {
    const label = th.textContent?.trim() ?? '';
    const column = th.dataset.sort ?? '';
    select.append(new Option(`${label}, ascending`, column), new Option(`${label}, descending`, `-${column}`));
  }
  select.addEventListener('change', () => {
    const column = select.value.replace(/^-/, '') as SortColumn;
    if (!SORT_COLUMNS.includes(column)) throw new Error(`cards sort: unknown column "${column}"`);
    onSort({ column, descending: select.value.startsWith('-') });
  });
}
