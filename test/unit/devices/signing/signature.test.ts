import assert from 'node:assert/strict';
import { sign } from 'node:crypto';
import { before, describe, test } from 'node:test';
import fc from 'fast-check';
import { DeviceAuthError } from '#shared/devices/signing/certificate.ts';
import {
  decodeSignature,
  lowSEcdsaSignature,
  verifyDeviceSignature,
} from '#shared/devices/signing/signature.ts';
import {
  type DeviceIdentity,
  encodeSignature,
  makeDeviceIdentity,
  type SignatureEncoding,
  signBytes,
  signPayload,
} from '#test/support/device-keys.ts';
import { runs } from '#test/support/runs.ts';

const ENCODINGS: SignatureEncoding[] = ['std', 'unpadded', 'url', 'url-padded'];

function invalidSignature(fn: () => unknown, message?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof DeviceAuthError, `expected DeviceAuthError, got ${String(err)}`);
    assert.equal(err.code, 'invalid_signature');
    assert.equal(err.kind, 'unauthenticated');
    if (message) assert.match(err.message, message);
    return true;
  });
}

describe('decodeSignature', () => {
  test('every accepted spelling of any bytes decodes to those bytes', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 80 }),
        fc.constantFrom(...ENCODINGS),
        (bytes, enc) => {
          assert.deepEqual(decodeSignature(encodeSignature(bytes, enc)), Buffer.from(bytes));
        },
      ),
      { numRuns: runs(500) },
    );
  });

  test('known spellings (RFC 4648 section 10 vectors and the URL-safe alphabet)', () => {
    assert.equal(decodeSignature('Zm9vYg==').toString(), 'foob');
    assert.equal(decodeSignature('Zm9vYg').toString(), 'foob');
    assert.equal(decodeSignature('Zm9vYmE=').toString(), 'fooba');
    assert.equal(decodeSignature('Zm9vYmE').toString(), 'fooba');
    assert.equal(decodeSignature('Zm9vYmFy').toString(), 'foobar');
    assert.deepEqual(decodeSignature('-_8='), Buffer.from([0xfb, 0xff]));
    assert.deepEqual(decodeSignature('-_8'), Buffer.from([0xfb, 0xff]));
    assert.deepEqual(decodeSignature('+/8='), Buffer.from([0xfb, 0xff]));
  });

  test('anything else is invalid_signature', () => {
    for (const bad of [
      '', // empty
      '====',
      ' Zm9v', // whitespace
      'Zm9v ',
      'Zm9v\nYmFy',
      'Zm9v\tYmFy',
      'Zm9v*mFy', // outside both alphabets
      'Zm9v.mFy',
      'Zm9vYmF%',
      'Zm9vYmFyé',
      '+_8=', // alphabets mixed
      '-/8=',
      'Z', // impossible length
      'Zm9vY',
      'Zm9vYg=', // wrong padding
      'Zm9vYg===',
      'Zm9vYmFy====',
      'Zm9v=YmFy', // padding inside
      '=Zm9v',
      'Zm9vYh==', // non-zero trailing bits
      'Zm9vYmF=',
      'Zm9vYmF',
      'A'.repeat(400), // far too long for a device signature
    ]) {
      invalidSignature(() => decodeSignature(bad), undefined);
    }
    invalidSignature(() => Reflect.apply(decodeSignature, undefined, [undefined]));
  });
});

const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

/** DER for ECDSA-Sig-Value, written here independently of the code under test. */
function ecdsaDer(r: bigint, s: bigint): Buffer {
  const int = (v: bigint) => {
    let b = Buffer.from(v.toString(16).padStart(64, '0'), 'hex');
    while (b.length > 1 && b[0] === 0 && b[1]! < 0x80) b = b.subarray(1);
    if (b[0]! >= 0x80) b = Buffer.concat([Buffer.from([0]), b]);
    return Buffer.concat([Buffer.from([0x02, b.length]), b]);
  };
  const body = Buffer.concat([int(r), int(s)]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

for (const keyType of ['p256', 'ed25519'] as const) {
  describe(`verifyDeviceSignature with ${keyType}`, () => {
    let id: DeviceIdentity;
    let other: DeviceIdentity;
    const payload = Buffer.from('{"clientTimestamp":"2026-01-02T03:04:05Z","serialNumber":"C02XYZ"}');

    before(async () => {
      [id, other] = await Promise.all([makeDeviceIdentity({ keyType }), makeDeviceIdentity({ keyType })]);
    });

    for (const encoding of ENCODINGS) {
      test(`verifies a ${encoding} base64 signature`, () => {
        const signature = signPayload(id.privateKey, keyType, payload, encoding);
        const bytes = verifyDeviceSignature({ publicKey: id.publicKey, keyType, payload, signature });
        assert.ok(Buffer.isBuffer(bytes));
      });
    }

    test('accepts decoded bytes too', () => {
      const signature = signBytes(id.privateKey, keyType, payload);
      verifyDeviceSignature({ publicKey: id.publicKey, keyType, payload, signature });
    });

    test('a tampered payload is invalid_signature', () => {
      const signature = signPayload(id.privateKey, keyType, payload);
      const tampered = Buffer.from(payload.toString().replace('C02XYZ', 'C02XYY'));
      invalidSignature(
        () => verifyDeviceSignature({ publicKey: id.publicKey, keyType, payload: tampered, signature }),
        /RFC 8785/,
      );
    });

    test('a signature by another key is invalid_signature', () => {
      const signature = signPayload(other.privateKey, keyType, payload);
      invalidSignature(() => verifyDeviceSignature({ publicKey: id.publicKey, keyType, payload, signature }));
    });

    test('a tampered signature is invalid_signature', () => {
      const bytes = signBytes(id.privateKey, keyType, payload);
      bytes[bytes.length - 1]! ^= 1;
      invalidSignature(() =>
        verifyDeviceSignature({
          publicKey: id.publicKey,
          keyType,
          payload,
          signature: encodeSignature(bytes),
        }),
      );
    });

    test('malformed base64 or garbage bytes are invalid_signature, not a crash', () => {
      for (const signature of ['', 'not base64!', 'AAAA', encodeSignature(Buffer.alloc(72, 0xff))]) {
        invalidSignature(() =>
          verifyDeviceSignature({ publicKey: id.publicKey, keyType, payload, signature }),
        );
      }
    });

    test('the key type must match the key', () => {
      const signature = signPayload(id.privateKey, keyType, payload);
      const wrong = keyType === 'p256' ? 'ed25519' : 'p256';
      invalidSignature(() =>
        verifyDeviceSignature({ publicKey: id.publicKey, keyType: wrong, payload, signature }),
      );
    });
  });
}

describe('ECDSA P-256 specifics', () => {
  let id: DeviceIdentity;
  const payload = Buffer.from('{"a":1}');
  before(async () => {
    id = await makeDeviceIdentity({ keyType: 'p256' });
  });

  test('a raw r||s (IEEE P1363) signature is refused: the wire format is DER', () => {
    const raw = sign('sha256', payload, { key: id.privateKey, dsaEncoding: 'ieee-p1363' });
    invalidSignature(() =>
      verifyDeviceSignature({
        publicKey: id.publicKey,
        keyType: 'p256',
        payload,
        signature: encodeSignature(raw),
      }),
    );
  });

  test('high-S and low-S forms of one signature both verify and give the same replay bytes', () => {
    for (let i = 0; i < 20; i++) {
      const raw = sign('sha256', payload, { key: id.privateKey, dsaEncoding: 'ieee-p1363' });
      const r = BigInt(`0x${raw.subarray(0, 32).toString('hex')}`);
      const s = BigInt(`0x${raw.subarray(32).toString('hex')}`);
      const low = s > P256_N / 2n ? P256_N - s : s;
      const lowDer = ecdsaDer(r, low);
      const highDer = ecdsaDer(r, P256_N - low);
      for (const der of [lowDer, highDer]) {
        const out = verifyDeviceSignature({
          publicKey: id.publicKey,
          keyType: 'p256',
          payload,
          signature: encodeSignature(der),
        });
        assert.deepEqual(out, lowDer);
      }
      assert.deepEqual(lowSEcdsaSignature(highDer), lowDer);
      assert.deepEqual(lowSEcdsaSignature(lowDer), lowDer);
    }
  });

  test('lowSEcdsaSignature at the edges: s around n/2, tiny s, s with leading zero bytes, short r', () => {
    const half = P256_N / 2n;
    const rs = [1n, 0x80n, 2n ** 200n + 12345n, P256_N - 1n];
    const ss = [1n, 0x7fn, 0x80n, 2n ** 247n, half - 1n, half, half + 1n, P256_N - 1n, P256_N - 2n ** 250n];
    for (const r of rs) {
      for (const value of ss) {
        const expected = ecdsaDer(r, value > half ? P256_N - value : value);
        assert.deepEqual(lowSEcdsaSignature(ecdsaDer(r, value)), expected, `r=${r} s=${value}`);
      }
    }
  });

  test('lowSEcdsaSignature leaves anything that is not an ECDSA DER signature alone', () => {
    for (const bytes of [Buffer.alloc(0), Buffer.from([0x30, 0x00]), Buffer.alloc(64, 0xff)]) {
      assert.deepEqual(lowSEcdsaSignature(bytes), bytes);
    }
  });
});

describe('Ed25519 specifics', () => {
  test('the returned bytes are the signature itself', async () => {
    const id = await makeDeviceIdentity({ keyType: 'ed25519' });
    const payload = Buffer.from('{}');
    const raw = signBytes(id.privateKey, 'ed25519', payload);
    assert.equal(raw.length, 64);
    const out = verifyDeviceSignature({
      publicKey: id.publicKey,
      keyType: 'ed25519',
      payload,
      signature: encodeSignature(raw, 'url'),
    });
    assert.deepEqual(out, raw);
  });
});
