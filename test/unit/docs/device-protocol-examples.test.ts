// The worked examples of docs/device-protocol.md, read from the page itself: the fingerprint, the canonical bytes and
// the signatures it documents must be what node:crypto and the service's own canonicalizer and verifier produce, so
// that an agent author can trust them.
import assert from 'node:assert/strict';
import { createHash, createPrivateKey, sign, verify, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { beforeEach, describe, test } from 'node:test';
import { canonicalize } from '#shared/core/canonical-json.ts';
import { eventsBody, inventoryBody, registerBody } from '#shared/devices/schemas.ts';
import {
  clearCertificateCache,
  DeviceAuthError,
  fingerprintOf,
} from '#shared/devices/signing/certificate.ts';
import { verifySignedDeviceRequest } from '#shared/devices/signing/verify-request.ts';

const DOC = new URL('../../../docs/device-protocol.md', import.meta.url);
const text = readFileSync(DOC, 'utf8');
const FIVE_MINUTES = 5 * 60_000;

/** The fenced code blocks of the page whose info string names them (```pem example-certificate), by name. */
function namedBlocks(markdown: string): Map<string, string> {
  const blocks = new Map<string, string>();
  const fence = /^```([a-z0-9-]+)[ \t]+([a-z0-9-]+)[ \t]*\n([\s\S]*?)\n```[ \t]*$/gm;
  for (const [, , name, body] of markdown.matchAll(fence)) {
    assert.ok(!blocks.has(name as string), `the block ${name} appears twice`);
    blocks.set(name as string, body as string);
  }
  return blocks;
}

const blocks = namedBlocks(text);
const block = (name: string): string => {
  const body = blocks.get(name);
  assert.ok(body !== undefined, `docs/device-protocol.md has no block named ${name}`);
  return body;
};
const json = (name: string) => JSON.parse(block(name)) as Record<string, unknown>;

/** The certificate PEM as a body carries it (the block's text plus its final line break). */
const pemOf = (name: string) => `${block(name)}\n`;

/** A verification at the documented clientTimestamp, as the device routes run it. */
function verifyAt(
  body: Record<string, unknown>,
  signature: string,
  options: { rawBody?: string; signatureInBody?: boolean; now?: Date } = {},
) {
  return verifySignedDeviceRequest({
    body,
    rawBody: options.rawBody,
    signature,
    signatureInBody: options.signatureInBody ?? false,
    now: options.now ?? new Date(body.clientTimestamp as string),
    maxSkewMs: FIVE_MINUTES,
  });
}

function refusedWith(fn: () => unknown, code: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof DeviceAuthError, `expected a DeviceAuthError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return true;
  });
}

/**
 * `text` with one byte changed: the character at the first occurrence of `marker` plus `offset`, replaced by another
 * digit or letter, so that the text is still JSON.
 */
function flipOneByte(text: string, marker: string, offset = 0): string {
  const at = text.indexOf(marker);
  assert.ok(at >= 0, `marker ${marker} not found`);
  const i = at + offset;
  const current = text[i] as string;
  let replacement = current === 'x' ? 'y' : 'x';
  if (/[0-9]/.test(current)) replacement = String((Number(current) + 1) % 10);
  return `${text.slice(0, i)}${replacement}${text.slice(i + 1)}`;
}

beforeEach(() => clearCertificateCache());

describe('docs/device-protocol.md', () => {
  test('names every example block it promises', () => {
    for (const name of [
      'example-private-key',
      'example-certificate',
      'example-fingerprint',
      'example-inventory-body',
      'example-canonical',
      'example-signature',
      'example-register-body',
      'example-register-canonical',
      'example-register-signature',
      'example-jcs-input',
      'example-jcs-canonical',
      'example-p256-private-key',
      'example-p256-certificate',
      'example-p256-events-body',
      'example-p256-canonical',
      'example-p256-signature',
    ]) {
      block(name);
    }
  });

  test('links nowhere outside the repository (no ../shared)', () => {
    assert.ok(!text.includes('../shared'), 'the page mentions ../shared, which a clone does not have');
  });
});

describe('worked example (a): Ed25519 key, certificate, fingerprint, inventory', () => {
  test('the certificate is self-signed by the documented key, valid to 2125', () => {
    const cert = new X509Certificate(pemOf('example-certificate'));
    const key = createPrivateKey(block('example-private-key'));
    assert.equal(key.asymmetricKeyType, 'ed25519');
    assert.ok(cert.checkPrivateKey(key), 'the certificate is not over the documented key');
    assert.ok(cert.verify(cert.publicKey), 'the certificate is not self-signed');
    assert.equal(cert.issuer, cert.subject);
    assert.equal(cert.validToDate.getUTCFullYear(), 2125);
  });

  test('the documented fingerprint is the SHA-256 of the DER', () => {
    const cert = new X509Certificate(pemOf('example-certificate'));
    const expected = block('example-fingerprint');
    assert.match(expected, /^[0-9a-f]{64}$/);
    assert.equal(createHash('sha256').update(cert.raw).digest('hex'), expected);
    assert.equal(fingerprintOf(pemOf('example-certificate')), expected);
  });

  test('the body carries the certificate and is a valid inventory body', () => {
    const body = json('example-inventory-body');
    assert.equal(body.certificate, pemOf('example-certificate'));
    const parsed = inventoryBody.safeParse(body);
    assert.ok(parsed.success, parsed.error?.message);
  });

  test('the canonicalizer turns the body into exactly the documented canonical bytes', () => {
    assert.equal(canonicalize(json('example-inventory-body')), block('example-canonical'));
  });

  test('node:crypto signs those bytes with the documented key into exactly the documented signature', () => {
    const signature = sign(
      null,
      Buffer.from(block('example-canonical'), 'utf8'),
      createPrivateKey(block('example-private-key')),
    );
    assert.equal(signature.toString('base64'), block('example-signature'));
  });

  test("the service's verifier accepts the documented request at its clientTimestamp, on both paths", () => {
    const body = json('example-inventory-body');
    const signature = block('example-signature');
    const raw = verifyAt(body, signature, { rawBody: block('example-canonical') });
    assert.equal(raw.via, 'raw');
    assert.equal(raw.certificate.fingerprint, block('example-fingerprint'));
    assert.equal(raw.certificate.keyType, 'ed25519');
    // Sent indented instead of canonical: the fast path fails, the canonical one accepts it.
    const pretty = verifyAt(body, signature, { rawBody: block('example-inventory-body') });
    assert.equal(pretty.via, 'canonical');
    assert.equal(pretty.canonical?.toString('utf8'), block('example-canonical'));
  });

  test('a one-byte change to the body makes verification fail', () => {
    const tampered = flipOneByte(block('example-canonical'), '"Claude Code"', 1);
    assert.notEqual(tampered, block('example-canonical'));
    refusedWith(
      () => verifyAt(JSON.parse(tampered), block('example-signature'), { rawBody: tampered }),
      'invalid_signature',
    );
  });

  test('the same request six minutes later is stale', () => {
    const body = json('example-inventory-body');
    const later = new Date(Date.parse(body.clientTimestamp as string) + 6 * 60_000);
    refusedWith(() => verifyAt(body, block('example-signature'), { now: later }), 'stale_timestamp');
  });
});

describe('worked example (b): register leaves the signature out of the signed bytes', () => {
  test('the body is a valid register body signed with the documented signature', () => {
    const body = json('example-register-body');
    const parsed = registerBody.safeParse(body);
    assert.ok(parsed.success, parsed.error?.message);
    assert.equal(body.certificate, pemOf('example-certificate'));
    assert.equal(body.signature, block('example-register-signature'));
  });

  test('the canonical form of the body without signature is the documented one', () => {
    const { signature: _signature, ...unsigned } = json('example-register-body');
    const canonical = canonicalize(unsigned);
    assert.equal(canonical, block('example-register-canonical'));
    assert.ok(!canonical.includes('"signature"'));
  });

  test('node:crypto signs it into exactly the documented signature', () => {
    const signature = sign(
      null,
      Buffer.from(block('example-register-canonical'), 'utf8'),
      createPrivateKey(block('example-private-key')),
    );
    assert.equal(signature.toString('base64'), block('example-register-signature'));
  });

  test("the service's verifier accepts it with the signature in the body, and refuses a changed body", () => {
    const body = json('example-register-body');
    const verified = verifyAt(body, body.signature as string, { signatureInBody: true });
    assert.equal(verified.via, 'canonical');
    assert.equal(verified.canonical?.toString('utf8'), block('example-register-canonical'));
    refusedWith(
      () => verifyAt({ ...body, model: 'MacBook Air' }, body.signature as string, { signatureInBody: true }),
      'invalid_signature',
    );
  });
});

describe('worked example (c): canonicalization', () => {
  test('the input canonicalizes to exactly the documented text', () => {
    assert.equal(canonicalize(json('example-jcs-input')), block('example-jcs-canonical'));
  });
});

describe('worked example (d): P-256 events batch', () => {
  test('the certificate is self-signed by the documented P-256 key', () => {
    const cert = new X509Certificate(pemOf('example-p256-certificate'));
    const key = createPrivateKey(block('example-p256-private-key'));
    assert.equal(key.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.ok(cert.checkPrivateKey(key));
    assert.ok(cert.verify(cert.publicKey));
  });

  test('the body is a valid events body and canonicalizes to the documented text', () => {
    const body = json('example-p256-events-body');
    assert.equal(body.certificate, pemOf('example-p256-certificate'));
    const parsed = eventsBody.safeParse(body);
    assert.ok(parsed.success, parsed.error?.message);
    assert.equal(canonicalize(body), block('example-p256-canonical'));
  });

  test('the documented DER signature verifies, with node:crypto and with the service', () => {
    const bytes = Buffer.from(block('example-p256-canonical'), 'utf8');
    const cert = new X509Certificate(pemOf('example-p256-certificate'));
    const signature = Buffer.from(block('example-p256-signature'), 'base64');
    assert.ok(verify('sha256', bytes, { key: cert.publicKey, dsaEncoding: 'der' }, signature));
    const verified = verifyAt(json('example-p256-events-body'), block('example-p256-signature'), {
      rawBody: block('example-p256-canonical'),
    });
    assert.equal(verified.via, 'raw');
    assert.equal(verified.certificate.keyType, 'p256');
  });

  test('a fresh signature made with the documented key verifies too, and a changed body does not', () => {
    const canonical = block('example-p256-canonical');
    const key = createPrivateKey(block('example-p256-private-key'));
    const fresh = sign('sha256', Buffer.from(canonical), { key, dsaEncoding: 'der' }).toString('base64');
    const body = json('example-p256-events-body');
    assert.equal(verifyAt(body, fresh, { rawBody: canonical }).via, 'raw');
    const tampered = flipOneByte(canonical, '"tokens_in":812', '"tokens_in":'.length);
    refusedWith(
      () => verifyAt(JSON.parse(tampered), block('example-p256-signature'), { rawBody: tampered }),
      'invalid_signature',
    );
  });
});
