// The spool: a durable local queue of events between the hooks that capture them and the daemon that sends them.
// Append-only segment files (NNNNNNNNNNNN.seg) of framed records (framing.ts), a state file (cursor, counters) and
// a lock file, all in one directory. docs/endpoint-agent.md ("The spool") describes the design:
// - append: one write() of one whole frame to the newest segment opened with O_APPEND, so concurrent appenders
//   never interleave and need no lock; only rotating to a new segment (and dropping the oldest to stay under the
//   size bound) takes the lock;
// - read: from the cursor, frame by frame; garbage between records is a torn record, skipped and counted once;
// - ack: moves the cursor (at-least-once: what is not acknowledged is read again) and deletes consumed segments.
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { decodeFrames, encodeRecord, HEADER_BYTES, MAX_PAYLOAD_BYTES } from './framing.ts';
import { LockTimeout, withLock } from './lock.ts';

export const DEFAULT_MAX_BYTES = 100 * 1024 * 1024;

export interface SpoolOptions {
  /** The bound on the spool's size on disk; the oldest events are dropped beyond it. */
  maxBytes?: number;
  /** The size at which the newest segment is closed and a new one started. */
  segmentBytes?: number;
  /** How long an incomplete record at the end of a segment may be a write in progress before it counts as torn. */
  graceMs?: number;
}

/** A place in the spool: the segment and the byte offset just after a record. */
export interface SpoolPosition {
  segment: number;
  offset: number;
}

export interface SpoolRecord<T = unknown> {
  /** Where the record ends: ack() it once the service has accepted this record and every one before it. */
  position: SpoolPosition;
  value: T;
}

export interface SpoolStats {
  /** Events dropped unsent to stay under the size bound, since the spool was created. */
  dropped: number;
  /** Torn records (a write cut short by a crash) detected and skipped, since the spool was created. */
  torn: number;
  /** Records waiting to be acknowledged. */
  pending: number;
  /** The spool's size on disk. */
  bytes: number;
}

interface SpoolState {
  cursor: SpoolPosition;
  dropped: number;
  torn: number;
  /** Torn regions that end before this position are already counted. */
  tornCounted: SpoolPosition;
}

const SEGMENT = /^(\d{12})\.seg$/;
const WINDOW_BYTES = 2 * (MAX_PAYLOAD_BYTES + HEADER_BYTES);
const START: SpoolPosition = { segment: 0, offset: 0 };

type ScannedFrame =
  | { kind: 'record'; start: number; end: number; payload: Buffer }
  | { kind: 'torn' | 'incomplete'; start: number; end: number };

const compare = (a: SpoolPosition, b: SpoolPosition): number => a.segment - b.segment || a.offset - b.offset;

function isPosition(value: unknown): value is SpoolPosition {
  const p = value as SpoolPosition | null;
  return typeof p === 'object' && p !== null && Number.isInteger(p.segment) && Number.isInteger(p.offset);
}

export class Spool {
  readonly dir: string;
  readonly maxBytes: number;
  readonly segmentBytes: number;
  readonly graceMs: number;

  constructor(dir: string, options: SpoolOptions = {}) {
    this.dir = dir;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.segmentBytes =
      options.segmentBytes ?? Math.min(8 * 1024 * 1024, Math.max(4 * 1024, Math.floor(this.maxBytes / 16)));
    this.graceMs = options.graceMs ?? 2000;
  }

  private segmentPath(seq: number): string {
    return join(this.dir, `${String(seq).padStart(12, '0')}.seg`);
  }

  private segments(): number[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const seqs: number[] = [];
    for (const name of names) {
      const m = SEGMENT.exec(name);
      if (m) seqs.push(Number(m[1]));
    }
    return seqs.sort((a, b) => a - b);
  }

  private lockPath(): string {
    return join(this.dir, 'lock');
  }

  private createSegment(seq: number): void {
    try {
      closeSync(openSync(this.segmentPath(seq), 'wx', 0o600));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }

  /** Appends one value (JSON) as one record. Safe to call from many processes at once. */
  append(value: unknown): void {
    const frame = encodeRecord(Buffer.from(JSON.stringify(value)));
    for (let attempt = 0; ; attempt++) {
      let seq = this.segments().at(-1);
      if (seq === undefined) {
        mkdirSync(this.dir, { recursive: true, mode: 0o700 });
        seq = 1;
        this.createSegment(seq);
      }
      let fd: number;
      try {
        // No O_CREAT: a segment deleted since the listing must not come back to life.
        fd = openSync(this.segmentPath(seq), constants.O_WRONLY | constants.O_APPEND);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT' && attempt < 10) continue;
        throw err;
      }
      try {
        const size = fstatSync(fd).size;
        const full = size > 0 && size + frame.length > this.segmentBytes;
        // Another appender rotated since the listing: write to the newest segment, never behind the reader.
        if ((full && this.rotate(seq) !== seq) || existsSync(this.segmentPath(seq + 1))) {
          if (attempt < 10) continue;
        }
        const written = writeSync(fd, frame);
        if (written !== frame.length)
          throw new Error(`short write to the spool (${written} of ${frame.length})`);
        return;
      } finally {
        closeSync(fd);
      }
    }
  }

  /** Starts the segment after `full` (unless someone did) and drops the oldest beyond the bound. */
  private rotate(full: number): number {
    try {
      return withLock(
        this.lockPath(),
        () => {
          const latest = this.segments().at(-1) ?? full;
          if (latest !== full) return latest;
          this.createSegment(full + 1);
          this.enforceBound();
          return full + 1;
        },
        { timeoutMs: 250 },
      );
    } catch (err) {
      // A hook never waits long: past the segment size is better than a slow tool call.
      if (err instanceof LockTimeout) return full;
      throw err;
    }
  }

  /** Under the lock: deletes the oldest segments while the spool is over its bound, counting their unsent records. */
  private enforceBound(): void {
    const seqs = this.segments();
    const sizes = new Map(seqs.map((seq) => [seq, this.sizeOf(seq)]));
    let total = [...sizes.values()].reduce((a, b) => a + b, 0);
    if (total <= this.maxBytes - this.segmentBytes || seqs.length < 2) return;
    const state = this.readState();
    while (seqs.length > 1 && total > this.maxBytes - this.segmentBytes) {
      const oldest = seqs.shift() as number;
      if (state.cursor.segment <= oldest) {
        const from = state.cursor.segment === oldest ? state.cursor.offset : 0;
        state.dropped += this.countRecords(oldest, from);
        state.cursor = { segment: seqs[0] as number, offset: 0 };
      }
      unlinkSync(this.segmentPath(oldest));
      total -= sizes.get(oldest) ?? 0;
    }
    this.writeState(state);
  }

  private sizeOf(seq: number): number {
    try {
      return statSync(this.segmentPath(seq)).size;
    } catch {
      return 0;
    }
  }

  private isStale(seq: number): boolean {
    try {
      return Date.now() - statSync(this.segmentPath(seq)).mtimeMs > this.graceMs;
    } catch {
      return true;
    }
  }

  /** Complete records from `from` to the end of a segment, by their headers (no checksum: a count, not a read). */
  private countRecords(seq: number, from: number): number {
    let count = 0;
    this.scan(seq, from, false, (frame) => {
      if (frame.kind === 'record') count++;
      return true;
    });
    return count;
  }

  /**
   * Calls `visit` with each frame of a segment from `from` (offsets absolute), reading a window at a time, until it
   * returns false. Returns false if the segment is gone.
   */
  private scan(seq: number, from: number, verify: boolean, visit: (frame: ScannedFrame) => boolean): boolean {
    let fd: number;
    try {
      fd = openSync(this.segmentPath(seq), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
    try {
      const size = fstatSync(fd).size;
      const window = Buffer.allocUnsafe(Math.min(WINDOW_BYTES, Math.max(size - from, 0)));
      let at = from;
      while (at < size) {
        const length = readSync(fd, window, 0, Math.min(window.length, size - at), at);
        const buf = window.subarray(0, length);
        const endsFile = at + length >= size;
        let next = at + length;
        for (const frame of decodeFrames(buf, 0, verify)) {
          if (frame.kind === 'incomplete') {
            // Cut by the window rather than by the end of the file: read again from the start of this record.
            if (!endsFile) next = at + frame.start;
            else if (!visit({ kind: 'incomplete', start: at + frame.start, end: size })) return true;
            break;
          }
          // Garbage running to the window's end may go on in the next one; the reader merges adjacent stretches.
          if (!visit({ ...frame, start: at + frame.start, end: at + frame.end })) return true;
        }
        if (next <= at) throw new Error(`spool segment ${seq}: no progress at offset ${at}`);
        at = next;
      }
      return true;
    } finally {
      closeSync(fd);
    }
  }

  private statePath(): string {
    return join(this.dir, 'state.json');
  }

  private readState(): SpoolState {
    try {
      const raw = JSON.parse(readFileSync(this.statePath(), 'utf8')) as Partial<SpoolState>;
      return {
        cursor: isPosition(raw.cursor) ? raw.cursor : START,
        dropped: Number.isInteger(raw.dropped) ? (raw.dropped as number) : 0,
        torn: Number.isInteger(raw.torn) ? (raw.torn as number) : 0,
        tornCounted: isPosition(raw.tornCounted) ? raw.tornCounted : START,
      };
    } catch {
      return { cursor: START, dropped: 0, torn: 0, tornCounted: START };
    }
  }

  /** Under the lock: replaces the state file atomically (write, fsync, rename). */
  private writeState(state: SpoolState): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.statePath()}.${process.pid}.tmp`;
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeSync(fd, `${JSON.stringify(state)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.statePath());
  }

  /**
   * Up to `max` records from the cursor, oldest first, each with its position. Nothing moves until ack(): read again,
   * the same records come back. Torn records on the way are skipped and counted (once).
   */
  readBatch<T = unknown>(max: number): SpoolRecord<T>[] {
    const state = this.readState();
    const seqs = this.segments();
    const records: SpoolRecord<T>[] = [];
    // The end of each torn stretch met, and how far there is nothing to send (where the cursor may move unasked).
    const torn: SpoolPosition[] = [];
    let lastTorn: SpoolPosition | undefined;
    let clear: SpoolPosition = state.cursor;
    const countTorn = (segment: number, start: number, end: number): boolean => {
      if (lastTorn && lastTorn.segment === segment && lastTorn.offset === start) torn.pop();
      lastTorn = { segment, offset: end };
      torn.push(lastTorn);
      if (records.length === 0) clear = lastTorn;
      return true;
    };
    for (let i = seqs.findIndex((seq) => seq >= state.cursor.segment); i >= 0 && i < seqs.length; i++) {
      const seq = seqs[i] as number;
      let waiting = false;
      const present = this.scan(
        seq,
        seq === state.cursor.segment ? state.cursor.offset : 0,
        true,
        (frame) => {
          if (frame.kind === 'record') {
            let value: T;
            try {
              value = JSON.parse(frame.payload.toString('utf8')) as T;
            } catch {
              return countTorn(seq, frame.start, frame.end);
            }
            records.push({ position: { segment: seq, offset: frame.end }, value });
            return records.length < max;
          }
          // An incomplete record is a write in progress unless nobody has written to the segment for a while.
          if (frame.kind === 'incomplete' && !this.isStale(seq)) {
            waiting = true;
            return false;
          }
          return countTorn(seq, frame.start, frame.end);
        },
      );
      if (!present || waiting || records.length >= max) break;
      // A segment's end is final once a newer one exists and nobody has written to it for a while.
      if (i === seqs.length - 1 || !this.isStale(seq)) break;
      if (records.length === 0) clear = { segment: seqs[i + 1] as number, offset: 0 };
    }
    if (torn.length > 0 || compare(clear, state.cursor) > 0) {
      withLock(this.lockPath(), () => {
        const now = this.readState();
        for (const end of torn) {
          if (compare(end, now.tornCounted) <= 0) continue;
          now.torn++;
          now.tornCounted = end;
        }
        if (compare(clear, now.cursor) > 0) now.cursor = clear;
        this.writeState(now);
      });
      this.deleteBefore(clear.segment);
    }
    return records;
  }

  /** Commits everything up to `position` as delivered; older positions are ignored. */
  ack(position: SpoolPosition): void {
    if (!isPosition(position)) throw new TypeError('ack: not a spool position');
    const moved = withLock(this.lockPath(), () => {
      const state = this.readState();
      if (compare(position, state.cursor) <= 0) return false;
      state.cursor = { segment: position.segment, offset: position.offset };
      this.writeState(state);
      return true;
    });
    if (moved) this.deleteBefore(position.segment);
  }

  private deleteBefore(segment: number): void {
    for (const seq of this.segments()) {
      if (seq >= segment) break;
      try {
        unlinkSync(this.segmentPath(seq));
      } catch {
        // Already gone (dropped by an appender).
      }
    }
  }

  stats(): SpoolStats {
    const state = this.readState();
    let bytes = 0;
    let pending = 0;
    for (const seq of this.segments()) {
      bytes += this.sizeOf(seq);
      if (seq < state.cursor.segment) continue;
      pending += this.countRecords(seq, seq === state.cursor.segment ? state.cursor.offset : 0);
    }
    return { dropped: state.dropped, torn: state.torn, pending, bytes };
  }
}

/** The spool of an agent state directory. */
export const spoolDir = (stateDir: string): string => join(stateDir, 'spool');

export const openSpool = (stateDir: string, options?: SpoolOptions): Spool =>
  new Spool(spoolDir(stateDir), options);

/** What the daemon reports to the service: drops and torn records since the start, and the backlog. */
export const spoolStats = (stateDir: string, options?: SpoolOptions): SpoolStats =>
  openSpool(stateDir, options).stats();
