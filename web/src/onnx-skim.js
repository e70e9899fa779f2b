// Skims an ONNX file down to its graph structure, reading it in slices: only shapes are needed to predict
// training time, so weight payloads (raw_data, float_data, ... of initializers and of Constant tensors) are
// dropped and never read, while every node, input, output and each initializer's name, data_type and dims
// are kept (parameter counts come from the dims). A 500 MB model becomes a few hundred KiB to base64 and send
// to the core. Shared by the page (File.slice) and the CLI (file handle reads). Plain JS with JSDoc types.
//
// Protobuf wire format, ONNX field numbers (onnx/onnx.proto): ModelProto.graph = 7, GraphProto.node = 1,
// .initializer = 5, .doc_string = 10, .sparse_initializer = 15; NodeProto.attribute = 5; AttributeProto.t = 5,
// .g = 6, .tensors = 10, .graphs = 11; TensorProto.dims = 1, .data_type = 2, .int32_data = 5,
// .int64_data = 7, .name = 8, .raw_data = 9.

/** Largest skimmed graph the core accepts (docs/API.md: `onnx_base64`, 12 MiB decoded). */
export const MAX_SKIMMED_BYTES = 12 * 1024 * 1024;
/** Tensor payloads up to this size are kept: shape constants, axes and scalars the core folds. */
const SMALL_PAYLOAD = 1024;
/** Bytes fetched per read while walking fields (payloads that are dropped are skipped, not read). */
const WINDOW = 64 * 1024;
/** Subgraphs (If, Loop, Scan bodies) nest at most this deep. */
const MAX_DEPTH = 8;

/**
 * Reads `length` bytes at `offset` (fewer only at the end of the file).
 * @typedef {(offset: number, length: number) => Promise<Uint8Array>} ReadAt
 */

/** A file that is not an ONNX model, or one cut short; `message` says where and why. */
export class OnnxSkimError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'OnnxSkimError';
  }
}

/**
 * @typedef {object} SkimResult
 * @property {Uint8Array} bytes the skimmed ModelProto
 * @property {number} bytesRead bytes of the file that were read
 * @property {number} droppedBytes payload bytes left out
 * @property {number} initializers initializers kept (without their data)
 */

/** Windowed reads over the file; counts what was read. */
class Cursor {
  /**
   * @param {ReadAt} readAt
   * @param {number} size
   */
  constructor(readAt, size) {
    this.readAt = readAt;
    this.size = size;
    this.bytesRead = 0;
    /** @type {Uint8Array} */
    this.window = new Uint8Array(0);
    this.windowStart = 0;
  }

  /**
   * The bytes [offset, offset + length), which must lie inside the file.
   * @param {number} offset
   * @param {number} length
   */
  async bytes(offset, length) {
    const inWindow = offset >= this.windowStart && offset + length <= this.windowStart + this.window.length;
    if (!inWindow) {
      const want = Math.min(Math.max(length, WINDOW), this.size - offset);
      const got = await this.readAt(offset, want);
      this.bytesRead += got.length;
      if (got.length < length) throw new OnnxSkimError(`ONNX file: could not read ${length} bytes at byte ${offset}`);
      this.window = got;
      this.windowStart = offset;
    }
    const start = offset - this.windowStart;
    return this.window.subarray(start, start + length);
  }
}

/**
 * One field of a message: its number, wire type, where its payload lies, and its varint value.
 * @typedef {{ number: number, wire: number, start: number, payload: number, end: number, value: number }} Field
 */

/**
 * Reads the field starting at `pos` in a message ending at `end`.
 * @param {Cursor} cur
 * @param {number} pos
 * @param {number} end
 * @returns {Promise<Field>}
 */
async function readField(cur, pos, end) {
  const head = await cur.bytes(pos, Math.min(20, end - pos));
  let at = 0;
  const varint = () => {
    let value = 0;
    for (let shift = 0; shift < 64; shift += 7) {
      if (at >= head.length) throw malformed(pos, 'a truncated varint');
      const byte = /** @type {number} */ (head[at++]);
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
    }
    throw malformed(pos, 'a varint longer than 10 bytes');
  };
  const tag = varint();
  const number = Math.floor(tag / 8);
  const wire = tag % 8;
  if (number === 0) throw malformed(pos, 'field number 0');
  let value = 0;
  let length = 0;
  if (wire === 0) value = varint();
  else if (wire === 1) length = 8;
  else if (wire === 5) length = 4;
  else if (wire === 2) length = varint();
  else throw malformed(pos, `unsupported wire type ${wire}`);
  const payload = pos + at;
  if (length > end - payload) throw malformed(pos, `a length of ${length} runs past the end of its message`);
  return { number, wire, start: pos, payload, end: payload + length, value };
}

/**
 * @param {number} pos
 * @param {string} why
 */
function malformed(pos, why) {
  return new OnnxSkimError(`ONNX file: malformed protobuf at byte ${pos} (${why}); is this an .onnx file?`);
}

/** Collects an output message; nested messages are written once their (small) content is known. */
class Writer {
  constructor() {
    /** @type {Uint8Array[]} */
    this.chunks = [];
    this.length = 0;
  }

  /** @param {Uint8Array} bytes */
  raw(bytes) {
    this.chunks.push(bytes);
    this.length += bytes.length;
    if (this.length > MAX_SKIMMED_BYTES) {
      throw new OnnxSkimError(
        `ONNX file: the graph structure alone is larger than ${MAX_SKIMMED_BYTES / 1024 / 1024} MiB without weights; the calculator reads at most that`,
      );
    }
  }

  /** @param {number} v */
  varint(v) {
    const out = [];
    while (v >= 0x80) {
      out.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    out.push(v);
    this.raw(Uint8Array.from(out));
  }

  /**
   * A length-delimited field holding `content`.
   * @param {number} number
   * @param {Writer} content
   */
  message(number, content) {
    this.varint(number * 8 + 2);
    this.varint(content.length);
    for (const chunk of content.chunks) this.raw(chunk);
  }

  bytes() {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const chunk of this.chunks) {
      out.set(chunk, at);
      at += chunk.length;
    }
    return out;
  }
}

/** Walk state shared by the skimmers. */
class Skimmer {
  /** @param {Cursor} cur */
  constructor(cur) {
    this.cur = cur;
    this.dropped = 0;
    this.initializers = 0;
  }

  /**
   * Copies a field unchanged (tag and payload).
   * @param {Writer} out
   * @param {Field} f
   */
  async copy(out, f) {
    // Copied in window-sized pieces, so a large kept field never needs one large read.
    for (let at = f.start; at < f.end; at += WINDOW) out.raw((await this.cur.bytes(at, Math.min(WINDOW, f.end - at))).slice());
  }

  /**
   * A TensorProto without its payload unless small: name, data_type and dims are what the core reads.
   * @param {number} start
   * @param {number} end
   */
  async tensor(start, end) {
    const out = new Writer();
    for (let pos = start; pos < end; ) {
      const f = await readField(this.cur, pos, end);
      pos = f.end;
      const keep = f.number === 1 || f.number === 2 || f.number === 8 ||
        ((f.number === 5 || f.number === 7 || f.number === 9) && f.end - f.payload <= SMALL_PAYLOAD);
      if (keep) await this.copy(out, f);
      else this.dropped += f.end - f.payload;
    }
    return out;
  }

  /**
   * A GraphProto: nodes (with skimmed attribute tensors and subgraphs), initializers without data, the rest kept.
   * @param {number} start
   * @param {number} end
   * @param {number} depth
   */
  async graph(start, end, depth) {
    if (depth > MAX_DEPTH) throw new OnnxSkimError(`ONNX file: subgraphs nest deeper than ${MAX_DEPTH} levels`);
    const out = new Writer();
    for (let pos = start; pos < end; ) {
      const f = await readField(this.cur, pos, end);
      pos = f.end;
      if (f.wire === 2 && f.number === 1) {
        out.message(1, await this.node(f.payload, f.end, depth));
      } else if (f.wire === 2 && f.number === 5) {
        this.initializers += 1;
        out.message(5, await this.tensor(f.payload, f.end));
      } else if (f.number === 10 || f.number === 15) {
        this.dropped += f.end - f.payload; // doc_string; sparse initializers (the core does not read them)
      } else {
        await this.copy(out, f);
      }
    }
    return out;
  }

  /**
   * A NodeProto: attributes may hold tensors (Constant) and subgraphs.
   * @param {number} start
   * @param {number} end
   * @param {number} depth
   */
  async node(start, end, depth) {
    const out = new Writer();
    for (let pos = start; pos < end; ) {
      const f = await readField(this.cur, pos, end);
      pos = f.end;
      if (f.wire === 2 && f.number === 5) out.message(5, await this.attribute(f.payload, f.end, depth));
      else if (f.number === 6) this.dropped += f.end - f.payload; // doc_string
      else await this.copy(out, f);
    }
    return out;
  }

  /**
   * @param {number} start
   * @param {number} end
   * @param {number} depth
   */
  async attribute(start, end, depth) {
    const out = new Writer();
    for (let pos = start; pos < end; ) {
      const f = await readField(this.cur, pos, end);
      pos = f.end;
      if (f.wire === 2 && (f.number === 5 || f.number === 10)) out.message(f.number, await this.tensor(f.payload, f.end));
      else if (f.wire === 2 && (f.number === 6 || f.number === 11)) out.message(f.number, await this.graph(f.payload, f.end, depth + 1));
      else await this.copy(out, f);
    }
    return out;
  }
}

/**
 * Skims the ONNX file of `size` bytes that `readAt` reads.
 * @param {ReadAt} readAt
 * @param {number} size
 * @returns {Promise<SkimResult>}
 */
export async function skimOnnx(readAt, size) {
  if (!Number.isSafeInteger(size) || size <= 0) throw new OnnxSkimError('ONNX file: the file is empty');
  const cur = new Cursor(readAt, size);
  const skimmer = new Skimmer(cur);
  const out = new Writer();
  let graphs = 0;
  for (let pos = 0; pos < size; ) {
    const f = await readField(cur, pos, size);
    pos = f.end;
    if (f.wire === 2 && f.number === 7) {
      graphs += 1;
      out.message(7, await skimmer.graph(f.payload, f.end, 0));
    } else if (f.number === 6) {
      skimmer.dropped += f.end - f.payload; // doc_string
    } else {
      await skimmer.copy(out, f);
    }
  }
  if (graphs === 0) throw new OnnxSkimError('ONNX file: not an ONNX model: no graph found (is this an .onnx file?)');
  return { bytes: out.bytes(), bytesRead: cur.bytesRead, droppedBytes: skimmer.dropped, initializers: skimmer.initializers };
}

/**
 * Standard base64 of `bytes` (btoa exists in browsers and in Node 16+).
 * @param {Uint8Array} bytes
 */
export function toBase64(bytes) {
  let text = '';
  for (let at = 0; at < bytes.length; at += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  }
  return btoa(text);
}

/**
 * A reader over a browser File (or Blob): each read is one slice.
 * @param {Blob} file
 * @returns {ReadAt}
 */
export function blobReader(file) {
  return async (offset, length) => new Uint8Array(await file.slice(offset, offset + length).arrayBuffer());
}
