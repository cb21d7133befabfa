// One spool record on disk: MAGIC (4 bytes) | payload length (u32 LE) | CRC-32 of length and payload (u32 LE) |
// payload. The magic starts with 0xF5, a byte that never occurs in UTF-8 text, so after a torn write the decoder
// finds the next record by searching for it; the checksum tells a real header from a stray 0xF5 in a length field.

export const MAGIC = Buffer.from([0xf5, 0x53, 0x50, 0x31]);
export const HEADER_BYTES = 12;
/** Larger payloads are refused on append, and a header claiming more is garbage, not a record. */
export const MAX_PAYLOAD_BYTES = 1024 * 1024;

let table: Uint32Array | undefined;

function crcTable(): Uint32Array {
  if (table) return table;
  table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}

/** CRC-32 (IEEE 802.3, the zlib one) over the given byte ranges in order. */
export function crc32(...parts: Uint8Array[]): number {
  const t = crcTable();
  let c = 0xffffffff;
  for (const part of parts) for (const byte of part) c = (t[(c ^ byte) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export function encodeRecord(payload: Uint8Array): Buffer {
  if (payload.length > MAX_PAYLOAD_BYTES)
    throw new RangeError(`spool record of ${payload.length} bytes exceeds ${MAX_PAYLOAD_BYTES}`);
  const frame = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  MAGIC.copy(frame, 0);
  frame.writeUInt32LE(payload.length, 4);
  frame.writeUInt32LE(crc32(frame.subarray(4, 8), payload), 8);
  frame.set(payload, HEADER_BYTES);
  return frame;
}

/** What the decoder finds at a position: a record, a stretch of garbage (a torn record), or the end of the data. */
export type Frame =
  | { kind: 'record'; start: number; end: number; payload: Buffer }
  | { kind: 'torn'; start: number; end: number }
  | { kind: 'incomplete'; start: number };

type Probe = 'record' | 'bad' | 'short';

function probe(buf: Buffer, at: number, verify: boolean): Probe {
  if (buf.length - at < HEADER_BYTES) {
    const n = Math.min(MAGIC.length, buf.length - at);
    return MAGIC.compare(buf, at, at + n, 0, n) === 0 ? 'short' : 'bad';
  }
  if (MAGIC.compare(buf, at, at + 4) !== 0) return 'bad';
  const length = buf.readUInt32LE(at + 4);
  if (length > MAX_PAYLOAD_BYTES) return 'bad';
  if (buf.length - at - HEADER_BYTES < length) return 'short';
  if (!verify) return 'record';
  const sum = crc32(
    buf.subarray(at + 4, at + 8),
    buf.subarray(at + HEADER_BYTES, at + HEADER_BYTES + length),
  );
  return sum === buf.readUInt32LE(at + 8) ? 'record' : 'bad';
}

/**
 * Decodes `buf` from `start`. A valid record is returned as such; bytes that do not start a valid record are one torn
 * region up to the next valid record. What may still be a record being written (a valid prefix of one at the end)
 * is `incomplete`: the caller decides whether it is a write in progress or a torn tail.
 */
export function* decodeFrames(buf: Buffer, start = 0, verify = true): Generator<Frame> {
  let at = start;
  while (at < buf.length) {
    const here = probe(buf, at, verify);
    if (here === 'record') {
      const end = at + HEADER_BYTES + buf.readUInt32LE(at + 4);
      yield { kind: 'record', start: at, end, payload: buf.subarray(at + HEADER_BYTES, end) };
      at = end;
      continue;
    }
    if (here === 'short') {
      // A record claiming more bytes than there are is being written, unless a complete record follows it: writes
      // to a file are serialized, so nothing lands after a write still in progress. Then it is a torn one.
      let next = buf.indexOf(MAGIC[0] as number, at + 1);
      while (next !== -1 && probe(buf, next, verify) !== 'record')
        next = buf.indexOf(MAGIC[0] as number, next + 1);
      if (next === -1) {
        yield { kind: 'incomplete', start: at };
        return;
      }
      yield { kind: 'torn', start: at, end: next };
      at = next;
      continue;
    }
    // Garbage: the torn region runs to the next position where a record (or a possible record at the end) starts.
    let next = buf.indexOf(MAGIC[0] as number, at + 1);
    while (next !== -1 && probe(buf, next, verify) === 'bad')
      next = buf.indexOf(MAGIC[0] as number, next + 1);
    if (next === -1) {
      yield { kind: 'torn', start: at, end: buf.length };
      return;
    }
    yield { kind: 'torn', start: at, end: next };
    at = next;
  }
}
