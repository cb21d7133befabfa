// A process appending to a spool, for the spool's crash and concurrency tests: `node spool-appender.ts <dir> <run>
// <count> <minBytes> <maxBytes> <segmentBytes>`. Prints each sequence number once its append has returned.
import { writeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Spool } from '#agent/spool/spool.ts';

/** The padding a record carries: its length and content follow from its sequence number, so damage shows. */
export const padding = (seq: number, min: number, max: number): string =>
  String.fromCharCode(97 + (seq % 26)).repeat(min + ((seq * 7919) % (max - min + 1)));

export const APPENDER = fileURLToPath(import.meta.url);

if (import.meta.main) {
  const [dir, run, count, minBytes, maxBytes, segmentBytes] = process.argv.slice(2);
  const spool = new Spool(dir as string, {
    segmentBytes: Number(segmentBytes),
    maxBytes: 1024 * 1024 * 1024,
  });
  for (let seq = 0; seq < Number(count); seq++) {
    spool.append({ run, seq, pad: padding(seq, Number(minBytes), Number(maxBytes)) });
    writeSync(1, `${seq}\n`);
  }
}
