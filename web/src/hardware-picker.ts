// The accelerator multi-select: catalogue entries and the user's custom accelerators as checkboxes,
// narrowed by a search box and filters (vendor, memory, price). Filters only hide rows; they never
// untick anything, and the count says how many ticked rows are hidden.

import { byId, element } from './dom';
import { sig3 } from './format.js';
import type { CustomEntry } from './scenario.js';
import type { Catalog, HardwareEntry, Precision } from './types';

const CUSTOM_PRECISIONS = ['fp32', 'tf32', 'fp16', 'bf16', 'fp8'] as const satisfies readonly Precision[];
/** The API's cap on accelerators per request (docs/API.md). */
const MAX_SELECTED = 64;

export interface HardwarePicker {
  /** Ticked ids in list order (catalogue order, then custom ones), and every custom entry. */
  read(): { hardware: string[]; custom: CustomEntry[] };
  apply(hardware: readonly string[], custom: readonly CustomEntry[]): void;
  /** The display name for an id, for error messages and charts. */
  nameOf(id: string): string;
}

interface Parts {
  search: HTMLInputElement;
  vendor: HTMLSelectElement;
  memory: HTMLSelectElement;
  price: HTMLSelectElement;
  list: HTMLElement;
  count: HTMLElement;
  clear: HTMLButtonElement;
  customPanel: HTMLDetailsElement;
  customAdd: HTMLButtonElement;
  customName: HTMLInputElement;
  customNumbers: Record<CustomField, HTMLInputElement>;
}

type CustomField = (typeof CUSTOM_PRECISIONS)[number] | 'bandwidth' | 'memory' | 'price';
const CUSTOM_FIELDS: readonly CustomField[] = [...CUSTOM_PRECISIONS, 'bandwidth', 'memory', 'price'];

function findParts(): Parts {
  return {
    search: byId('hardware-search', HTMLInputElement),
    vendor: byId('filter-vendor', HTMLSelectElement),
    memory: byId('filter-memory', HTMLSelectElement),
    price: byId('filter-price', HTMLSelectElement),
    list: byId('hardware-list', HTMLElement),
    count: byId('hardware-count', HTMLElement),
    clear: byId('hardware-clear', HTMLButtonElement),
    customPanel: byId('custom-hw', HTMLDetailsElement),
    customAdd: byId('custom-add', HTMLButtonElement),
    customName: byId('custom-name', HTMLInputElement),
    customNumbers: Object.fromEntries(CUSTOM_FIELDS.map((field) => [field, byId(`custom-${field}`, HTMLInputElement)])) as Record<
      CustomField,
      HTMLInputElement
    >,
  };
}

/** A catalogue field that may be missing or null (the catalogue records vary by age of the part). */
function numberField(entry: HardwareEntry, key: string): number | null {
  const value = entry[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function vendorOf(entry: HardwareEntry): string {
  return typeof entry.vendor === 'string' ? entry.vendor : 'other';
}

const VENDOR_LABELS: Record<string, string> = { nvidia: 'NVIDIA', amd: 'AMD', google: 'Google', intel: 'Intel', custom: 'Custom' };

function priceText(price: number | null): string {
  return price === null ? 'no price' : `$${price.toFixed(2)}/h`;
}

function bandwidthText(gbs: number | null): string {
  if (gbs === null) return '';
  return gbs >= 1000 ? `${sig3(gbs / 1000)} TB/s` : `${sig3(gbs)} GB/s`;
}

/** What the filters compare: the same numbers for catalogue and custom rows. */
interface RowFacts {
  vendor: string;
  memoryGb: number | null;
  price: number | null;
}

/**
 * A checkbox named by the accelerator alone; its details (memory, price…) are its description, so a
 * screen reader says the name first and the rest after.
 */
function checkbox(id: string, name: string, meta: HTMLElement): HTMLInputElement {
  const box = element('input');
  box.type = 'checkbox';
  box.value = id;
  box.setAttribute('aria-label', name);
  meta.id = `hw-meta-${id}`;
  box.setAttribute('aria-describedby', meta.id);
  return box;
}

function setFacts(row: HTMLElement, facts: RowFacts, search: string): void {
  row.dataset.vendor = facts.vendor;
  row.dataset.memory = String(facts.memoryGb ?? '');
  row.dataset.price = String(facts.price ?? '');
  row.dataset.search = search.toLowerCase();
}

function catalogueRow(entry: HardwareEntry): HTMLElement {
  const memory = numberField(entry, 'memory_gb');
  const price = numberField(entry, 'price_per_hour_usd');
  const label = element('label', undefined, 'pick');
  const meta = [entry.id, memory === null ? '' : `${sig3(memory)} GB`, bandwidthText(numberField(entry, 'memory_bandwidth_gbs')), priceText(price)]
    .filter(Boolean)
    .join(' · ');
  const metaSpan = element('span', meta, 'pick-meta');
  label.append(checkbox(entry.id, entry.name, metaSpan), element('span', entry.name, 'pick-name'), metaSpan);
  const vendor = vendorOf(entry);
  setFacts(label, { vendor, memoryGb: memory, price }, `${entry.name} ${entry.id} ${vendor} ${memory ?? ''}gb ${String(entry.memory_type ?? '')} ${String(entry.architecture ?? '')}`);
  return label;
}

function customName(entry: CustomEntry): string {
  return entry.name?.trim() || 'Custom accelerator';
}

function customRow(entry: CustomEntry, onRemove: (id: string) => void): HTMLElement {
  const row = element('div', undefined, 'pick custom');
  const label = element('label');
  const peaks = CUSTOM_PRECISIONS.filter((p) => entry.peak_tflops[p] !== undefined)
    .map((p) => `${p} ${sig3(entry.peak_tflops[p] ?? 0)}`)
    .join(', ');
  const meta = `custom · ${peaks} TFLOP/s · ${sig3(entry.memory_gb)} GB · ${bandwidthText(entry.memory_bandwidth_gbs)} · ${priceText(entry.price_per_hour_usd ?? null)}`;
  const metaSpan = element('span', meta, 'pick-meta');
  label.append(checkbox(entry.id, customName(entry), metaSpan), element('span', customName(entry), 'pick-name'), metaSpan);
  const remove = element('button', 'Remove', 'button small remove');
  remove.type = 'button';
  remove.setAttribute('aria-label', `Remove ${customName(entry)}`);
  remove.addEventListener('click', () => onRemove(entry.id));
  row.append(label, remove);
  setFacts(row, { vendor: 'custom', memoryGb: entry.memory_gb, price: entry.price_per_hour_usd ?? null }, `${customName(entry)} custom ${entry.id}`);
  return row;
}

function rowMatches(row: HTMLElement, parts: Parts, words: string[]): boolean {
  if (!words.every((word) => (row.dataset.search ?? '').includes(word))) return false;
  if (parts.vendor.value !== '' && row.dataset.vendor !== parts.vendor.value) return false;
  const minMemory = Number(parts.memory.value);
  if (minMemory > 0 && !(Number(row.dataset.memory || 0) >= minMemory)) return false;
  const priceFilter = parts.price.value;
  if (priceFilter !== '') {
    if (row.dataset.price === '') return false;
    if (priceFilter !== 'priced' && Number(row.dataset.price) > Number(priceFilter)) return false;
  }
  return true;
}

/** The vendor filter's options: all, each vendor of the catalogue, and custom. */
function fillVendorFilter(select: HTMLSelectElement, catalog: Catalog): void {
  const vendors = [...new Set(catalog.hardware.map(vendorOf))];
  select.replaceChildren(
    ...[['', 'all'] as const, ...vendors.map((v) => [v, VENDOR_LABELS[v] ?? v] as const), ['custom', 'Custom'] as const].map(([value, text]) => {
      const option = element('option', text);
      option.value = value;
      return option;
    }),
  );
}

/** The custom form's numbers and problems, all problems in one box under it (the fields are too narrow for their own). */
function readCustomValues(parts: Parts): { values: Partial<Record<CustomField, number>>; problems: string[] } {
  const values: Partial<Record<CustomField, number>> = {};
  const problems: string[] = [];
  for (const field of CUSTOM_FIELDS) {
    const input = parts.customNumbers[field];
    const name = (input.labels?.[0]?.textContent ?? field).replace(/\s+/g, ' ').trim();
    const required = field === 'fp32' || field === 'bandwidth' || field === 'memory';
    let problem = '';
    if (input.value.trim() === '' && !input.validity.badInput) {
      if (required) problem = `${name}: required`;
    } else if (!Number.isFinite(input.valueAsNumber) || input.valueAsNumber < 0 || (field !== 'price' && input.valueAsNumber === 0)) {
      problem = `${name}: expected a number above 0${field === 'price' ? ' (or 0)' : ''}`;
    } else {
      values[field] = input.valueAsNumber;
    }
    if (problem === '') input.removeAttribute('aria-invalid');
    else input.setAttribute('aria-invalid', 'true');
    if (problem !== '') problems.push(problem);
  }
  const box = byId('custom-error', HTMLElement);
  box.textContent = problems.join('; ');
  box.hidden = problems.length === 0;
  return { values, problems };
}

/** The custom accelerator the form's valid numbers describe, with the first free id `custom-N`. */
function newCustomEntry(values: Partial<Record<CustomField, number>>, existing: readonly CustomEntry[], nameText: string): CustomEntry {
  const used = new Set(existing.map((entry) => entry.id));
  let n = existing.length + 1;
  while (used.has(`custom-${n}`)) n += 1;
  const peak: CustomEntry['peak_tflops'] = { fp32: values.fp32 ?? 0 };
  for (const precision of CUSTOM_PRECISIONS) {
    const value = values[precision];
    if (value !== undefined) peak[precision] = value;
  }
  const entry: CustomEntry = {
    id: `custom-${n}`,
    name: nameText.trim() || `Custom accelerator ${n}`,
    peak_tflops: peak,
    memory_bandwidth_gbs: values.bandwidth ?? 0,
    memory_gb: values.memory ?? 0,
  };
  if (values.price !== undefined) entry.price_per_hour_usd = values.price;
  return entry;
}

export function createHardwarePicker(catalog: Catalog, onChange: () => void): HardwarePicker {
  const parts = findParts();
  let custom: CustomEntry[] = [];
  const names = new Map(catalog.hardware.map((entry) => [entry.id, entry.name]));

  fillVendorFilter(parts.vendor, catalog);

  const boxes = (): HTMLInputElement[] => [...parts.list.querySelectorAll<HTMLInputElement>('input[type=checkbox]')];
  const rows = (): HTMLElement[] => [...parts.list.querySelectorAll<HTMLElement>(':scope > .pick')];

  function refresh(): void {
    const words = parts.search.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    for (const row of rows()) {
      row.hidden = !rowMatches(row, parts, words);
      if (!row.hidden) shown += 1;
    }
    const ticked = boxes().filter((box) => box.checked);
    const hidden = ticked.filter((box) => box.closest<HTMLElement>('.pick')?.hidden).length;
    const total = rows().length;
    parts.count.textContent =
      `${ticked.length} selected${hidden > 0 ? ` (${hidden} hidden by the filters)` : ''} · showing ${shown} of ${total}` +
      (ticked.length >= MAX_SELECTED ? ` · at most ${MAX_SELECTED} at once` : '');
    // At the cap, unticked boxes are disabled rather than letting the core reject the request.
    for (const box of boxes()) box.disabled = !box.checked && ticked.length >= MAX_SELECTED;
  }

  /**
   * Rebuilds the list: custom entries, then the ticked catalogue entries (so a restored scenario's
   * choices are in view without scrolling), then the rest in catalogue order. Only called when the
   * whole selection is replaced or an entry added or removed: rows never jump while being ticked.
   */
  function render(selected: ReadonlySet<string>): void {
    const customRows = custom.map((entry) => customRow(entry, remove));
    const ticked = catalog.hardware.filter((entry) => selected.has(entry.id));
    const others = catalog.hardware.filter((entry) => !selected.has(entry.id));
    parts.list.replaceChildren(...customRows, ...[...ticked, ...others].map(catalogueRow));
    for (const box of boxes()) box.checked = selected.has(box.value);
    refresh();
  }

  function read(): { hardware: string[]; custom: CustomEntry[] } {
    const ticked = boxes().filter((box) => box.checked).map((box) => box.value);
    // Catalogue order first, then custom entries: a stable order for links and tests.
    const customIds = new Set(custom.map((entry) => entry.id));
    return {
      hardware: [...ticked.filter((id) => !customIds.has(id)), ...ticked.filter((id) => customIds.has(id))],
      custom: custom.map((entry) => ({ ...entry })),
    };
  }

  function remove(id: string): void {
    const selected = new Set(read().hardware);
    custom = custom.filter((entry) => entry.id !== id);
    selected.delete(id);
    render(selected);
    parts.search.focus(); // the removed row's button is gone; keep focus in the picker
    onChange();
  }

  // ---------------------------------------------------------------- custom accelerator form

  parts.customAdd.addEventListener('click', () => {
    const { values, problems } = readCustomValues(parts);
    if (problems.length > 0) {
      parts.customPanel.querySelector<HTMLInputElement>('[aria-invalid=true]')?.focus();
      return;
    }
    const entry = newCustomEntry(values, custom, parts.customName.value);
    const selected = new Set(read().hardware);
    custom = [...custom, entry];
    selected.add(entry.id);
    render(selected);
    parts.customName.value = '';
    parts.count.textContent = `Added "${customName(entry)}". ${parts.count.textContent}`;
    onChange();
  });

  // ---------------------------------------------------------------- events

  // The custom form's own inputs change nothing until "Add" is pressed.
  parts.customPanel.addEventListener('input', (event) => event.stopPropagation());
  parts.customPanel.addEventListener('change', (event) => event.stopPropagation());
  for (const control of [parts.search, parts.vendor, parts.memory, parts.price]) {
    control.addEventListener('input', (event) => {
      event.stopPropagation(); // filtering changes no input
      refresh();
    });
    control.addEventListener('change', (event) => event.stopPropagation());
  }
  parts.list.addEventListener('change', (event) => {
    event.stopPropagation();
    refresh();
    onChange();
  });
  parts.list.addEventListener('input', (event) => event.stopPropagation()); // the change handler covers it
  parts.clear.addEventListener('click', () => {
    for (const box of boxes()) box.checked = false;
    refresh();
    onChange();
  });

  return {
    read,
    apply(hardware, entries) {
      custom = entries.map((entry) => ({ ...entry }));
      render(new Set(hardware));
    },
    nameOf(id) {
      return names.get(id) ?? customName(custom.find((entry) => entry.id === id) ?? { id, peak_tflops: { fp32: 0 }, memory_bandwidth_gbs: 0, memory_gb: 0 });
    },
  };
}
