// The strict reading of a request's text (shared/core/http/utf8.ts) and the gateway's rule for which bodies reach a
// function as text (local-server/api-gateway.ts passedAsText, as API Gateway HTTP APIs do).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { passedAsText } from '#local-server/api-gateway.ts';
import { mediaType } from '#shared/core/http/content-type.ts';
import {
  decodeUtf8,
  firstInvalidUtf8,
  invalidUtf8InJson,
  undecodablePercent,
} from '#shared/core/http/utf8.ts';
import { runs } from '#test/support/runs.ts';

const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));

describe('UTF-8, strictly', () => {
  test('firstInvalidUtf8 finds a fault exactly when the WHATWG decoder (fatal) refuses the bytes', () => {
    const fatal = new TextDecoder('utf-8', { fatal: true });
    const accepts = (b: Uint8Array) => {
      try {
        fatal.decode(b);
        return true;
      } catch {
        return false;
      }
    };
    // Random bytes, and valid text with one byte changed (faults next to real sequences).
    const mutatedText = fc
      .tuple(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }), fc.nat(), fc.nat({ max: 255 }))
      .map(([text, at, byte]) => {
        const b = Buffer.from(text, 'utf8');
        b[at % b.length] = byte;
        return new Uint8Array(b);
      });
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 24 }), mutatedText), (b) => {
        assert.equal(firstInvalidUtf8(b) === undefined, accepts(b));
        assert.equal(decodeUtf8(b) !== undefined, accepts(b));
      }),
      { numRuns: runs(2000) },
    );
  });

  test('decodeUtf8 gives the text as sent: a BOM is kept, nothing is replaced', () => {
    assert.equal(decodeUtf8(bytes([0xef, 0xbb, 0xbf], '{}')), '\ufeff{}');
    assert.equal(decodeUtf8(bytes('é😀\ufffd')), 'é😀\ufffd');
    assert.equal(decodeUtf8(bytes('a', [0xff])), undefined);
    assert.deepEqual(firstInvalidUtf8(bytes('ab', [0xc3, 0x28])), { offset: 2, byte: 0xc3 });
  });

  test('invalidUtf8InJson names the string or member name that holds the bytes, else the body', () => {
    const body = bytes('{"records":[{"action_type":"x"},{"actor_email":"a', [0xff], 'b"}]}');
    assert.deepEqual(invalidUtf8InJson(body)?.path, ['records', 1, 'actor_email']);
    // A surrogate encoded in three bytes (WTF-8) and a truncated four-byte sequence are not UTF-8 either.
    assert.deepEqual(invalidUtf8InJson(bytes('{"title":"', [0xed, 0xa0, 0x80], '"}'))?.path, ['title']);
    assert.deepEqual(invalidUtf8InJson(bytes('{"t":"', [0xf0, 0x90, 0x80], 'x"}'))?.path, ['t']);
    assert.deepEqual(invalidUtf8InJson(bytes('{"k', [0xfe], '":1}'))?.path, ['k\udcfe']);
    // Not JSON once read: the body as a whole, with where the bytes are.
    assert.deepEqual(invalidUtf8InJson(bytes('{"a":', [0xff])), { path: [], at: { offset: 5, byte: 0xff } });
    assert.equal(invalidUtf8InJson(bytes('{"a":"é"}')), undefined);
  });

  test('undecodablePercent: what is not percent-encoded UTF-8, and nothing else', () => {
    for (const ok of ['', 'abc', 'a+b', '%E2%82%AC', '%F0%9F%98%80', '%25FF', 'é']) {
      assert.equal(undecodablePercent(ok), undefined, ok);
    }
    assert.equal(undecodablePercent('%FF'), '%FF');
    assert.equal(undecodablePercent('x%FFy'), '%FF');
    assert.equal(undecodablePercent('%ED%A0%80'), '%ED%A0%80');
    assert.equal(undecodablePercent('%C0%AF'), '%C0%AF');
    assert.equal(undecodablePercent('%ZZ'), '%ZZ');
    assert.equal(undecodablePercent('a%'), '%');
    assert.equal(undecodablePercent('%E2%82'), '%E2%82');
  });
});

describe('which bodies API Gateway passes as text', () => {
  const json = Buffer.from('{"a":"é"}');

  test('text media types with no parameter but a UTF-8 charset; anything else is base64', () => {
    const text = [
      'application/json',
      'APPLICATION/JSON',
      'application/json; charset=utf-8',
      'application/json;charset="UTF-8"',
      'application/xml',
      'application/javascript',
      'text/plain',
      'text/csv; charset=utf8',
    ];
    const binary = [
      undefined,
      '',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'text/plain; charset=iso-8859-1',
      'application/json; boundary=x',
      'application/x-www-form-urlencoded',
      'application/vnd.api+json',
      'application/problem+json; charset=utf-8',
      'application/octet-stream',
      'multipart/form-data; boundary=x',
      'image/png',
    ];
    for (const type of text) assert.equal(passedAsText(type, json), true, String(type));
    for (const type of binary) assert.equal(passedAsText(type, json), false, String(type));
  });

  test('bytes that are not UTF-8 under a text type go base64, so that the function sees them as sent', () => {
    assert.equal(passedAsText('application/json', bytes('{"a":"', [0xff], '"}')), false);
  });

  test('mediaType reads the essence and unquoted parameters', () => {
    assert.deepEqual(mediaType('Application/JSON ; Charset="utf-8" ; x=1'), {
      essence: 'application/json',
      params: { charset: 'utf-8', x: '1' },
    });
    assert.equal(mediaType(undefined), undefined);
  });
});
