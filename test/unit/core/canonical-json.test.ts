import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  CanonicalizationError,
  canonicalBytes,
  canonicalize,
  MAX_CANONICAL_DEPTH,
} from '#shared/core/canonical-json.ts';
import { runs } from '#test/support/runs.ts';

// Expected strings below are copied from the text of RFC 8785, not produced by the implementation.

describe('RFC 8785 examples', () => {
  // Section 3.2.2: the input as JSON text, escapes and all.
  const SAMPLE = String.raw`{
       "numbers": [333333333.33333329, 1E30, 4.50,
                   2e-3, 0.000000000000000000000000001],
       "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
       "literals": [null, true, false]
     }`;

  test('3.2.3: the 3.2.2 sample canonicalized', () => {
    // 3.2.3, without the display line wrap.
    const expected = String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`;
    assert.equal(canonicalize(JSON.parse(SAMPLE)), expected);
  });

  test('3.2.4: the UTF-8 bytes of the canonical sample', () => {
    const hex = `
      7b 22 6c 69 74 65 72 61 6c 73 22 3a 5b 6e 75 6c 6c 2c 74 72
      75 65 2c 66 61 6c 73 65 5d 2c 22 6e 75 6d 62 65 72 73 22 3a
      5b 33 33 33 33 33 33 33 33 33 2e 33 33 33 33 33 33 33 2c 31
      65 2b 33 30 2c 34 2e 35 2c 30 2e 30 30 32 2c 31 65 2d 32 37
      5d 2c 22 73 74 72 69 6e 67 22 3a 22 e2 82 ac 24 5c 75 30 30
      30 66 5c 6e 41 27 42 5c 22 5c 5c 5c 5c 5c 22 2f 22 7d`;
    const bytes = canonicalBytes(JSON.parse(SAMPLE));
    assert.ok(Buffer.isBuffer(bytes));
    assert.equal(bytes.toString('hex'), hex.replace(/\s+/g, ''));
  });

  test('3.2.3: sorting of object properties by UTF-16 code units', () => {
    const input = String.raw`{
       "\u20ac": "Euro Sign",
       "\r": "Carriage Return",
       "\ufb33": "Hebrew Letter Dalet With Dagesh",
       "1": "One",
       "\ud83d\ude00": "Emoji: Grinning Face",
       "\u0080": "Control",
       "\u00f6": "Latin Small Letter O With Diaeresis"
     }`;
    const order = [
      'Carriage Return',
      'One',
      'Control',
      'Latin Small Letter O With Diaeresis',
      'Euro Sign',
      'Emoji: Grinning Face',
      'Hebrew Letter Dalet With Dagesh',
    ];
    const out = canonicalize(JSON.parse(input));
    const values = [...out.matchAll(/:"([^"]*)"/g)].map((m) => m[1]);
    assert.deepEqual(values, order);
    // The whole text: "\r" escaped (3.2.2.2), every other name as is.
    assert.equal(
      out,
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  test('3.2.3: "" < "a" < "aa" < "ab"', () => {
    assert.equal(canonicalize({ ab: 4, aa: 3, a: 2, '': 1 }), '{"":1,"a":2,"aa":3,"ab":4}');
  });

  test('appendix B: number serialization samples (IEEE 754 bits → JSON)', () => {
    const table: [string, string][] = [
      ['0000000000000000', '0'],
      ['8000000000000000', '0'],
      ['0000000000000001', '5e-324'],
      ['8000000000000001', '-5e-324'],
      ['7fefffffffffffff', '1.7976931348623157e+308'],
      ['ffefffffffffffff', '-1.7976931348623157e+308'],
      ['4340000000000000', '9007199254740992'],
      ['c340000000000000', '-9007199254740992'],
      ['4430000000000000', '295147905179352830000'],
      ['44b52d02c7e14af5', '9.999999999999997e+22'],
      ['44b52d02c7e14af6', '1e+23'],
      ['44b52d02c7e14af7', '1.0000000000000001e+23'],
      ['444b1ae4d6e2ef4e', '999999999999999700000'],
      ['444b1ae4d6e2ef4f', '999999999999999900000'],
      ['444b1ae4d6e2ef50', '1e+21'],
      ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
      ['3eb0c6f7a0b5ed8d', '0.000001'],
      ['41b3de4355555553', '333333333.3333332'],
      ['41b3de4355555554', '333333333.33333325'],
      ['41b3de4355555555', '333333333.3333333'],
      ['41b3de4355555556', '333333333.3333334'],
      ['41b3de4355555557', '333333333.33333343'],
      ['becbf647612f3696', '-0.0000033333333333333333'],
      ['43143ff3c1cb0959', '1424953923781206.2'],
    ];
    for (const [bits, json] of table) {
      const n = Buffer.from(bits, 'hex').readDoubleBE(0);
      assert.equal(canonicalize(n), json, `IEEE 754 ${bits}`);
      assert.equal(canonicalize([n]), `[${json}]`);
    }
  });

  test('appendix B: NaN and Infinity are errors (note 3)', () => {
    for (const bits of ['7fffffffffffffff', '7ff0000000000000']) {
      const n = Buffer.from(bits, 'hex').readDoubleBE(0);
      assert.throws(() => canonicalize({ n }), CanonicalizationError);
    }
    assert.throws(() => canonicalize(Number.NEGATIVE_INFINITY), /not a JSON number/);
    assert.throws(() => canonicalize([1, Number.NaN]), TypeError);
  });

  test('ECMAScript number forms: exponent thresholds, -0, the 3.2.2 sample numbers', () => {
    const cases: [number, string][] = [
      [-0, '0'],
      [1e21, '1e+21'],
      [1e20, '100000000000000000000'],
      [1e-7, '1e-7'],
      [1e-6, '0.000001'],
      [0.000001, '0.000001'],
      // The 3.2.2 sample numbers, spelt as in the RFC.
      [Number('333333333.33333329'), '333333333.3333333'],
      [Number('1E30'), '1e+30'],
      [Number('4.50'), '4.5'],
      [Number('2e-3'), '0.002'],
      [Number('0.000000000000000000000000001'), '1e-27'],
      [-1.5e-9, '-1.5e-9'],
      [123456789012345680000, '123456789012345680000'],
    ];
    for (const [n, json] of cases) assert.equal(canonicalize(n), json, String(n));
  });

  test('appendix E: subtypes kept as strings', () => {
    assert.equal(
      canonicalize(JSON.parse('{"time": "2019-01-28T07:45:10Z", "big": "055", "val": 3.5}')),
      '{"big":"055","time":"2019-01-28T07:45:10Z","val":3.5}',
    );
  });
});

describe('3.2.2.2 string escaping', () => {
  test('controls: \\b \\t \\n \\f \\r by name, the rest as lowercase \\u00hh', () => {
    let input = '';
    for (let c = 0; c < 0x20; c++) input += String.fromCharCode(c);
    const expected =
      '"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f' +
      '\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f"';
    assert.equal(canonicalize(input), expected);
  });

  test('" and \\ escaped; / DEL U+2028 non-ASCII and astral characters as is', () => {
    assert.equal(canonicalize('a"b\\c/d'), '"a\\"b\\\\c/d"');
    assert.equal(canonicalize('\u007f\u0080\u2028\u2029é€😀'), '"\u007f\u0080\u2028\u2029é€😀"');
    assert.equal(canonicalBytes('€').toString('hex'), '22e282ac22');
    assert.equal(canonicalBytes('😀').toString('hex'), '22f09f988022');
  });

  test('property names are escaped the same way', () => {
    assert.equal(canonicalize({ 'a\nb': 1, 'q"': 2 }), '{"a\\nb":1,"q\\"":2}');
  });

  test('lone surrogates are errors (note in 3.2.2.2)', () => {
    for (const bad of ['\ud800', 'x\udead', '\udc00\ud800', 'a\ud83d', '\ude00b']) {
      assert.throws(() => canonicalize(bad), CanonicalizationError, JSON.stringify(bad));
      assert.throws(() => canonicalize({ [bad]: 1 }), CanonicalizationError);
      assert.throws(() => canonicalize({ k: [bad] }), CanonicalizationError);
    }
    assert.equal(canonicalize('\ud83d\ude00'), '"😀"');
  });
});

describe('structure', () => {
  test('no whitespace, nested objects sorted, array order kept', () => {
    assert.equal(
      canonicalize({ b: [3, { z: 1, y: [{ d: 1, c: 2 }] }, 1], a: { c: null, b: true, a: false } }),
      '{"a":{"a":false,"b":true,"c":null},"b":[3,{"y":[{"c":2,"d":1}],"z":1},1]}',
    );
    assert.equal(canonicalize({}), '{}');
    assert.equal(canonicalize([]), '[]');
    assert.equal(canonicalize(''), '""');
  });

  test('integer-like keys sort as strings, not numerically', () => {
    assert.equal(canonicalize({ 10: 'a', 2: 'b', 1: 'c', b: 'd' }), '{"1":"c","10":"a","2":"b","b":"d"}');
  });

  test('__proto__ parsed from JSON is an ordinary member', () => {
    assert.equal(canonicalize(JSON.parse('{"b":1,"__proto__":{"x":1}}')), '{"__proto__":{"x":1},"b":1}');
  });

  test('undefined, functions and symbols: omitted in objects, null in arrays (as JSON.stringify)', () => {
    const value = { a: undefined, b: () => 1, c: Symbol('s'), d: [undefined, () => 1, Symbol('t')], e: 1 };
    assert.equal(canonicalize(value), '{"d":[null,null,null],"e":1}');
    assert.equal(canonicalize(value), JSON.stringify({ d: value.d, e: 1 }));
  });

  test('toJSON and boxed primitives as JSON.stringify treats them', () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    assert.equal(canonicalize({ at }), '{"at":"2026-01-02T03:04:05.678Z"}');
    assert.equal(canonicalize([new Number(1.5), new String('x'), new Boolean(false)]), '[1.5,"x",false]');
  });

  test('no JSON form: BigInt, cycles, top-level undefined', () => {
    assert.throws(() => canonicalize({ n: 1n }), CanonicalizationError);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    assert.throws(() => canonicalize(cyclic), /cycle/);
    assert.throws(() => canonicalize(undefined), CanonicalizationError);
    // A shared (not cyclic) reference is fine.
    const shared = { x: 1 };
    assert.equal(canonicalize({ a: shared, b: shared }), '{"a":{"x":1},"b":{"x":1}}');
  });

  test('nesting past MAX_CANONICAL_DEPTH is a CanonicalizationError, not a stack overflow (found by the fuzz)', () => {
    const nested = (n: number) => JSON.parse(`${'{"a":'.repeat(n)}1${'}'.repeat(n)}`);
    assert.equal(canonicalize(nested(MAX_CANONICAL_DEPTH)).length, MAX_CANONICAL_DEPTH * 6 + 1);
    assert.throws(() => canonicalize(nested(MAX_CANONICAL_DEPTH + 1)), CanonicalizationError);
    assert.throws(
      () => canonicalize(JSON.parse(`${'['.repeat(50_000)}${']'.repeat(50_000)}`)),
      /deeper than/,
    );
  });
});

describe('properties', () => {
  const json = fc.jsonValue({ stringUnit: 'binary', maxDepth: 4 });

  /** The same value with every object's keys inserted in another order. */
  function reorder(value: unknown, seed: number): unknown {
    if (Array.isArray(value)) return value.map((v) => reorder(v, seed));
    if (value === null || typeof value !== 'object') return value;
    const keys = Object.keys(value);
    const rotated = keys.length
      ? [...keys.slice(seed % keys.length), ...keys.slice(0, seed % keys.length)]
      : keys;
    const out: Record<string, unknown> = {};
    for (const k of rotated.reverse()) {
      Object.defineProperty(out, k, {
        value: reorder((value as Record<string, unknown>)[k], seed + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }

  test('canonicalize(JSON.parse(canonicalize(x))) === canonicalize(x)', () => {
    fc.assert(
      fc.property(json, (x) => {
        const c = canonicalize(x);
        assert.equal(canonicalize(JSON.parse(c)), c);
      }),
      { numRuns: runs(500) },
    );
  });

  test('the canonical text means the same as JSON.stringify', () => {
    fc.assert(
      fc.property(json, (x) => {
        assert.equal(canonicalize(JSON.parse(canonicalize(x))), canonicalize(JSON.parse(JSON.stringify(x))));
      }),
      { numRuns: runs(300) },
    );
  });

  test('key insertion order does not matter', () => {
    fc.assert(
      fc.property(json, fc.nat(), (x, seed) => {
        assert.equal(canonicalize(reorder(x, seed)), canonicalize(x));
      }),
      { numRuns: runs(500) },
    );
  });

  test('member order is UTF-16 code unit order (oracle: UTF-16BE byte comparison)', () => {
    const utf16be = (s: string) => Buffer.from(s, 'utf16le').swap16();
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary', maxLength: 4 }), fc.constant(0)), (obj) => {
        const keys = Object.keys(obj).sort((a, b) => Buffer.compare(utf16be(a), utf16be(b)));
        // Read the names in text order (JSON.parse would put integer-like names first).
        const textOrder = [...canonicalize(obj).matchAll(/"((?:[^"\\]|\\.)*)":0/g)].map(
          (m) => JSON.parse(`"${m[1]}"`) as string,
        );
        assert.deepEqual(textOrder, keys);
      }),
      { numRuns: runs(300) },
    );
  });

  test('finite doubles: ECMAScript form that parses back to the same number', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        const text = canonicalize(n);
        assert.equal(text, JSON.stringify(n));
        assert.ok(Object.is(Number(text), n === 0 ? 0 : n));
      }),
      { numRuns: runs(1000) },
    );
  });
});
