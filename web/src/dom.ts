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
