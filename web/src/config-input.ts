// Getting a config into the box: paste (plain textarea), upload (file picker) or drag-and-drop.
// Files are read locally (File.text(), or File.slice for ONNX); nothing is uploaded anywhere.

import { byId } from './dom';
import { LARGE_CONFIG_CHARS } from './form';
import { wireHubFetch } from './hub';
import { MAX_SKIMMED_BYTES, blobReader, skimOnnx, toBase64 } from './onnx-skim.js';

/** The API's request limit (docs/API.md); a bigger text file could never be computed. */
const MAX_FILE_BYTES = 16 * 1024 * 1024;

export interface ConfigInputEvents {
  /** `text` (from a file, a drop or a large paste) is the config now: the page puts it in the box (form.ts
   * setConfig: a large one is held in memory) and recomputes. */
  loaded(text: string, name: string): void;
  /** A file that cannot be used; `message` starts with "config:" like every model error. */
  rejected(message: string): void;
}

function sizeText(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;
}

/**
 * An ONNX model, read in slices and skimmed to its graph structure (web/src/onnx-skim.js: weights are never
 * read), as the box's text: `{"onnx_base64": ..., "name": ...}`, which model-config.js passes on.
 */
async function readOnnxFile(file: File): Promise<{ ok: true; text: string } | { ok: false; message: string }> {
  try {
    const skimmed = await skimOnnx(blobReader(file), file.size);
    const name = file.name.replace(/\.onnx$/i, '');
    return { ok: true, text: JSON.stringify({ onnx_base64: toBase64(skimmed.bytes), name }) };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const limit = MAX_SKIMMED_BYTES / 1024 / 1024;
    return { ok: false, message: `config: "${file.name}" (${sizeText(file.size)}) cannot be read as ONNX: ${reason} (limit after dropping weights: ${limit} MiB)` };
  }
}

/** Checks and reads one file: ONNX by name, anything else as JSON text. */
async function readConfigFile(file: File): Promise<{ ok: true; text: string } | { ok: false; message: string }> {
  if (/\.onnx$/i.test(file.name)) return readOnnxFile(file);
  if (file.size > MAX_FILE_BYTES) {
    return { ok: false, message: `config: "${file.name}" is ${sizeText(file.size)}; the largest config the calculator reads is 16 MiB` };
  }
  const text = await file.text();
  if (text.includes('\u0000')) return { ok: false, message: `config: "${file.name}" is not a text file; expected JSON or an .onnx model` };
  return { ok: true, text };
}

export function wireConfigInput(events: ConfigInputEvents): void {
  const textarea = byId('config', HTMLTextAreaElement);
  const held = byId('config-held', HTMLElement);
  const picker = byId('config-file', HTMLInputElement);
  const upload = byId('config-upload', HTMLButtonElement);
  const zone = byId('drop-zone', HTMLElement);
  const fieldset = byId('model-fields', HTMLFieldSetElement);

  const take = async (file: File): Promise<void> => {
    const reading = await readConfigFile(file);
    if (!reading.ok) {
      events.rejected(reading.message);
      return;
    }
    events.loaded(reading.text, file.name);
  };

  // Text far over the limit is refused before it reaches the box: Chromium's textarea itself crashes the
  // tab at about 100 MiB (tests/browser/robustness.test.mjs), and the core could not read it anyway. A
  // string's length in UTF-16 units never exceeds its UTF-8 size, so nothing readable is refused.
  const refuseText = (chars: number, what: string): boolean => {
    if (chars <= MAX_FILE_BYTES) return false;
    events.rejected(`config: ${what} is ${sizeText(chars)} or more; the largest config the calculator reads is 16 MiB`);
    return true;
  };
  // A large paste never reaches the textarea either (its layout would block the page, form.ts
  // LARGE_CONFIG_CHARS): it replaces the config and is held in memory. Pasting onto the held config's
  // summary replaces it too, whatever the size.
  const paste = (event: ClipboardEvent, always: boolean): void => {
    const text = event.clipboardData?.getData('text/plain') ?? '';
    if (refuseText(text.length, 'the pasted text')) {
      event.preventDefault();
    } else if (always || text.length > LARGE_CONFIG_CHARS) {
      event.preventDefault();
      events.loaded(text, 'pasted text');
    }
  };
  textarea.addEventListener('paste', (event) => paste(event, false));
  held.addEventListener('paste', (event) => paste(event, true));

  upload.addEventListener('click', () => picker.click());
  picker.addEventListener('change', () => {
    const file = picker.files?.[0];
    picker.value = ''; // choosing the same file again must fire `change` again
    if (file) void take(file);
  });

  // The whole Model box is the drop target (a textarea alone is a small target on a phone).
  let depth = 0; // dragenter/leave fire for every child; count them so the highlight does not flicker
  fieldset.addEventListener('dragenter', (event) => {
    if (!event.dataTransfer?.types.includes('Files') && !event.dataTransfer?.types.includes('text/plain')) return;
    event.preventDefault();
    depth += 1;
    zone.classList.add('dragging');
  });
  fieldset.addEventListener('dragover', (event) => {
    event.preventDefault(); // allows the drop
    if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy';
  });
  fieldset.addEventListener('dragleave', () => {
    depth = Math.max(0, depth - 1);
    if (depth === 0) zone.classList.remove('dragging');
  });
  fieldset.addEventListener('drop', (event) => {
    event.preventDefault(); // otherwise the browser opens the file, leaving the page
    depth = 0;
    zone.classList.remove('dragging');
    const file = event.dataTransfer?.files[0];
    if (file) {
      void take(file);
      return;
    }
    const text = event.dataTransfer?.getData('text/plain');
    if (text && !refuseText(text.length, 'the dropped text')) events.loaded(text, 'dropped text');
  });

  // A config fetched by its Hub name (hub.ts) arrives the same way, under the same size limit.
  wireHubFetch(events, MAX_FILE_BYTES);
}
