// The spool's record framing, property-tested: whatever sequence of records is written, it reads back exactly; and
// whatever damage the bytes take (cut short, bytes flipped, garbage spliced in), the decoder returns only records
// that were written, in order, never a damaged one, and finds every record the damage did not touch.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { crc32, decodeFrames, encodeRecord, HEADER_BYTES } from '#agent/spool/framing.ts';

const payloads = fc.array(fc.string({ unit: 'binary', maxLength: 300 }), { minLength: 1, maxLength: 30 });

function layout(texts: string[]) {
  const frames = texts.map((text) => encodeRecord(Buffer.from(text)));
  const starts: number[] = [];
  let at = 0;
  for (const frame of frames) {
    starts.push(at);
    at += frame.length;
  }
  return { bytes: Buffer.concat(frames), starts, frames };
}

const decoded = (bytes: Buffer) =>
  [...decodeFrames(bytes)].flatMap((frame) => (frame.kind === 'record' ? [frame.payload.toString()] : []));

test('CRC-32 is the standard one (zlib, IEEE 802.3)', () => {
  assert.equal(crc32(Buffer.from('123456789')), 0xcbf43926);
  assert.equal(crc32(Buffer.from('1234'), Buffer.from('56789')), 0xcbf43926);
});

test('records read back exactly, in order, with nothing torn', () => {
  fc.assert(
    fc.property(payloads, (texts) => {
      const frames = [...decodeFrames(layout(texts).bytes)];
      assert.deepEqual(
        frames.map((frame) => frame.kind),
        texts.map(() => 'record'),
      );
      assert.deepEqual(decoded(layout(texts).bytes), texts);
    }),
  );
});

test('cut short anywhere: the complete records are read, the last is incomplete, nothing is invented', () => {
  fc.assert(
    fc.property(payloads, fc.nat(), (texts, cutSeed) => {
      const { bytes, starts, frames } = layout(texts);
      const cut = cutSeed % (bytes.length + 1);
      const complete = texts.filter((_, i) => (starts[i] as number) + (frames[i] as Buffer).length <= cut);
      const all = [...decodeFrames(bytes.subarray(0, cut))];
      assert.deepEqual(decoded(bytes.subarray(0, cut)), complete);
      const partial = cut < bytes.length && !starts.includes(cut);
      assert.equal(all.at(-1)?.kind === 'incomplete', partial);
      assert.ok(all.every((frame) => frame.kind !== 'torn'));
    }),
  );
});

test('a flipped byte loses at most the record it hit, which is reported torn', () => {
  fc.assert(
    fc.property(payloads, fc.nat(), fc.integer({ min: 1, max: 255 }), (texts, atSeed, xor) => {
      const { bytes, starts, frames } = layout(texts);
      const at = atSeed % bytes.length;
      const damaged = Buffer.from(bytes);
      damaged[at] = (damaged[at] as number) ^ xor;
      const hit = starts.findLastIndex((start) => start <= at);
      const expected = texts.filter((_, i) => i !== hit);
      const got = decoded(damaged);
      // A flip inside a length field can make the record claim more bytes than exist: it then hides the records
      // after it (incomplete), which a reader judges by time; never a wrong record.
      const frameKinds = [...decodeFrames(damaged)].map((frame) => frame.kind);
      if (frameKinds.at(-1) === 'incomplete') assert.deepEqual(got, expected.slice(0, got.length));
      else {
        assert.deepEqual(got, expected);
        assert.equal(frameKinds.filter((kind) => kind === 'torn').length, 1);
      }
      assert.ok((frames[hit] as Buffer).length >= HEADER_BYTES);
    }),
  );
});

test('garbage spliced between records is one torn record and hides nothing', () => {
  fc.assert(
    fc.property(
      payloads,
      fc.nat(),
      fc.uint8Array({ minLength: 1, maxLength: 200 }),
      (texts, whereSeed, junk) => {
        const { bytes, starts } = layout(texts);
        const where = starts[whereSeed % starts.length] as number;
        const spliced = Buffer.concat([bytes.subarray(0, where), junk, bytes.subarray(where)]);
        const frames = [...decodeFrames(spliced)];
        assert.deepEqual(decoded(spliced), texts);
        assert.ok(frames.filter((frame) => frame.kind === 'torn').length <= 1);
      },
    ),
  );
});

test('a record larger than the limit is refused on write', () => {
  assert.throws(() => encodeRecord(Buffer.alloc(1024 * 1024 + 1)), RangeError);
});
