// Light and dark themes. "auto" follows the system (prefers-color-scheme, in style.css); the toggle
// cycles auto → light → dark and remembers the choice on this device only (localStorage, which
// some file:// and privacy settings refuse; then the choice lasts for the visit).

const KEY = 'prenet-theme';
const ORDER = ['auto', 'light', 'dark'] as const;
export type Theme = (typeof ORDER)[number];

function isTheme(value: unknown): value is Theme {
  return typeof value === 'string' && (ORDER as readonly string[]).includes(value);
}

function stored(): Theme {
  try {
    const value = localStorage.getItem(KEY);
    return isTheme(value) ? value : 'auto';
  } catch {
    return 'auto';
  }
}

function remember(theme: Theme): void {
  try {
    localStorage.setItem(KEY, theme);
  } catch {
    // Storage refused: the theme still applies until the page is closed.
  }
}

export function applyTheme(theme: Theme): void {
  if (theme === 'auto') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}

/** @param forced a theme from the link (`theme=dark`, for iframes), which is not remembered */
export function initTheme(button: HTMLButtonElement, forced: string | null): void {
  let theme: Theme = isTheme(forced) ? forced : stored();
  const show = (): void => {
    applyTheme(theme);
    button.textContent = `Theme: ${theme}`;
    // The accessible name starts with the visible text (WCAG 2.5.3, axe label-content-name-mismatch), so
    // a speech user can say what they see.
    button.setAttribute('aria-label', `Theme: ${theme}${theme === 'auto' ? ' (as the system)' : ''}. Press to change the colour theme.`);
  };
  show();
  button.addEventListener('click', () => {
    theme = ORDER[(ORDER.indexOf(theme) + 1) % ORDER.length] ?? 'auto';
    remember(theme);
    show();
  });
}
