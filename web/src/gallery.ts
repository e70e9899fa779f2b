// The gallery of starting scenarios at the top of the page (issue 21): one card per entry of examples.js
// GALLERY, each a plain link to this page's hash, so a click restores it like a shared link (main.ts's
// hashchange handler) and the card can be copied or opened in a new tab. Text only, no HTML.

import { element } from './dom';
import { exampleParams, GALLERY } from './examples.js';
import type { Catalog } from './types';

/** The hash of a gallery entry, commas unescaped like the page's own links. */
export function galleryHash(params: URLSearchParams): string {
  return `#${params.toString().replace(/%2C/gi, ',')}`;
}

/**
 * Fills `list` with a card per gallery entry whose preset and accelerators this catalogue has (one naming
 * something else would open with a problem), and hides `box` when none is left.
 */
export function renderGallery(box: HTMLElement, list: HTMLElement, catalog: Catalog): void {
  const presets = new Set(catalog.presets.map((preset) => preset.id));
  const hardware = new Set(catalog.hardware.map((entry) => entry.id));
  const usable = GALLERY.filter(
    (start) => presets.has(start.params.preset ?? '') && (start.params.hardware ?? '').split(',').every((id) => hardware.has(id)),
  );
  list.replaceChildren(
    ...usable.map((start) => {
      const link = element('a', undefined, 'gallery-card');
      link.href = galleryHash(exampleParams(start));
      link.append(element('span', start.title, 'gallery-title'), element('span', start.description, 'gallery-description'));
      const item = element('li');
      item.append(link);
      return item;
    }),
  );
  box.hidden = usable.length === 0;
}
