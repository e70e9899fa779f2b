// Tiny DOM helpers. User- and core-supplied text only ever reaches the page through textContent.

/** The element with this id, checked to be of the expected kind, so a broken page fails loudly. */
export function byId<T extends HTMLElement>(id: string, kind: { new (): T; name: string }): T {
  const element = document.getElementById(id);
  if (!(element instanceof kind)) throw new Error(`page is missing #${id} (${kind.name})`);
  return element;
}

export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  text?: string,
  className?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className !== undefined) node.className = className;
  return node;
}

export function debounce(action: () => void, ms: number): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(action, ms);
  };
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * An SVG element with attributes set one by one (setAttribute, never markup), so text from the
 * core or the user can reach a chart only as text nodes.
 */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | number> = {},
  text?: string,
): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Offers text as a file download without any network: a Blob URL, revoked after the click. */
export function download(text: string, fileName: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = element('a');
  link.href = url;
  link.download = fileName;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // Revoke on the next turn: the click starts the download asynchronously in some browsers.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
