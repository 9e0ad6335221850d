// Expected texts are those of json.dumps(value, ensure_ascii=False, separators=(",", ":")) in
// CPython 3.11.7.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Bounded, encodeJson } from '../../src/http/json/json-encode.js';
import { PyFloat } from '../../src/http/json/json-value.js';
import { seededRandom } from '../support/load.js';

test('constants are written as null, true and false', () => {
  assert.equal(encodeJson([null, true, false]), '[null,true,false]');
});

test('containers are written compactly without spaces', () => {
  assert.equal(encodeJson({ a: [1, 2], b: {} }), '{"a":[1,2],"b":{}}');
});

test('Maps are written in their insertion order', () => {
  const value = new Map<string, unknown>([
    ['z', 1],
    ['a', new Map([['y', []]])],
  ]);
  assert.equal(encodeJson(value), '{"z":1,"a":{"y":[]}}');
});

test('a "__proto__" Map key is written like any other key', () => {
  assert.equal(encodeJson(new Map([['__proto__', 1]])), '{"__proto__":1}');
});

test('plain objects are written in JS key order', () => {
  assert.equal(encodeJson({ b: 1, a: 2 }), '{"b":1,"a":2}');
});

test('undefined object properties are skipped', () => {
  assert.equal(encodeJson({ a: undefined, b: 1 }), '{"b":1}');
});

test('bigints are written exactly', () => {
  assert.equal(
    encodeJson([123456789012345678901234567890n, -9007199254740993n]),
    '[123456789012345678901234567890,-9007199254740993]',
  );
});

test('plain numbers are written as JSON.stringify writes them', () => {
  assert.equal(encodeJson([0, -0, 42, -7, 9007199254740991]), '[0,0,42,-7,9007199254740991]');
});

test('integral PyFloats get a ".0" like Python repr', () => {
  assert.equal(
    encodeJson([new PyFloat(1), new PyFloat(-3), new PyFloat(123456789012345)]),
    '[1.0,-3.0,123456789012345.0]',
  );
});

test('PyFloats use the shortest round-trip digits', () => {
  assert.equal(
    encodeJson([new PyFloat(1.5), new PyFloat(0.1), new PyFloat(2 / 3)]),
    '[1.5,0.1,0.6666666666666666]',
  );
});

test('PyFloats of 1e16 and beyond use a signed two-digit exponent', () => {
  assert.equal(
    encodeJson([
      new PyFloat(1e16),
      new PyFloat(1.2345678901234568e16),
      new PyFloat(1e100),
      new PyFloat(-2.5e300),
    ]),
    '[1e+16,1.2345678901234568e+16,1e+100,-2.5e+300]',
  );
});

test('PyFloats just below 1e16 are still positional', () => {
  assert.equal(encodeJson(new PyFloat(9999999999999998)), '9999999999999998.0');
});

test('PyFloats below 1e-4 use an exponent and 1e-4 does not', () => {
  assert.equal(
    encodeJson([
      new PyFloat(0.0001),
      new PyFloat(0.00001),
      new PyFloat(1.5e-7),
      new PyFloat(5e-324),
    ]),
    '[0.0001,1e-05,1.5e-07,5e-324]',
  );
});

test('PyFloat zero keeps its sign', () => {
  assert.equal(encodeJson([new PyFloat(0), new PyFloat(-0)]), '[0.0,-0.0]');
});

test('non-finite PyFloats are written as null', () => {
  assert.equal(
    encodeJson([new PyFloat(Infinity), new PyFloat(-Infinity), new PyFloat(NaN)]),
    '[null,null,null]',
  );
});

test('non-ASCII characters are written raw', () => {
  assert.equal(encodeJson('é😀\u2028\u007f'), '"é😀\u2028\u007f"');
});

test('quotes, backslashes and control characters are escaped like Python', () => {
  assert.equal(encodeJson('"\\/\b\f\n\r\t\u0000\u001f'), '"\\"\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f"');
});

test('lone surrogates are written as \\u escapes (deviation D7)', () => {
  assert.equal(encodeJson('a\ud800b\udfff'), '"a\\ud800b\\udfff"');
});

test('keys are escaped like strings', () => {
  assert.equal(encodeJson(new Map([['a"\n', 1]])), '{"a\\"\\n":1}');
});

test('a circular structure is refused', () => {
  const looped: unknown[] = [];
  looped.push(looped);
  assert.throws(() => encodeJson(looped), TypeError);
});

test('a value shared by two branches is written twice', () => {
  const shared = [1];
  assert.equal(encodeJson([shared, shared]), '[[1],[1]]');
});

test('a Bounded value is written whole when it fits', () => {
  const value = new Map<string, unknown>([['a', [1, 'two', null]]]);
  assert.equal(encodeJson({ input: new Bounded(value, 100) }), '{"input":{"a":[1,"two",null]}}');
});

// The oracles below find the longest fitting start by trying every length, with JSON.stringify as
// the measure: nothing of the encoder's own arithmetic.
// Every kind of character the encoder measures differently, and the edges of each kind: the short
// escapes, U+E000 and above (written raw), pairs at the ends of both halves' ranges, lone halves.
const PIECES = [
  'a',
  'Z',
  '7',
  ' ',
  'é',
  '€',
  '😀',
  '"',
  '\\',
  '\n',
  '\t',
  '\b',
  '\f',
  '\r',
  '\u0001',
  '\u001f',
  '\u007f',
  '\u2028',
  '\ue000',
  '\uff21',
  '\ufffd',
  '\u{10000}',
  '\u{1F400}',
  '\u{10FFFF}',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
];

function randomText(next: (min: number, max: number) => number, lengthMax: number): string {
  let text = '';
  const length = next(0, lengthMax);
  for (let k = 0; k < length; k++) text += PIECES[next(0, PIECES.length - 1)] ?? '';
  return text;
}

/** The longest start of `text`, never ending between the halves of a pair, whose JSON fits. */
function longestFittingStart(text: string, room: number): string {
  for (let kept = text.length; kept > 0; kept--) {
    const splitsPair =
      /[\ud800-\udbff]/.test(text[kept - 1] ?? '') && /[\udc00-\udfff]/.test(text[kept] ?? '');
    if (!splitsPair && JSON.stringify(text.slice(0, kept)).length <= room)
      return JSON.stringify(text.slice(0, kept));
  }
  return '""';
}

/** The longest run of first members (one at least) whose container fits. */
function longestFittingRun(
  open: string,
  members: readonly string[],
  close: string,
  room: number,
): string {
  for (let count = members.length; count > 1; count--) {
    const written = open + members.slice(0, count).join(',') + close;
    if (written.length <= room) return written;
  }
  return open + members.slice(0, 1).join(',') + close;
}

test('a Bounded string keeps the longest start whose JSON fits its room', () => {
  const next = seededRandom(2311);
  for (let round = 0; round < 400; round++) {
    const text = randomText(next, 24);
    const whole = JSON.stringify(text).length;
    for (let room = 0; room <= whole + 1; room++) {
      assert.equal(
        encodeJson(new Bounded(text, room)),
        longestFittingStart(text, room),
        `${JSON.stringify(text)} in ${room}`,
      );
    }
  }
});

test('a Bounded string longer than its room keeps exactly the characters that fit', () => {
  assert.equal(encodeJson(new Bounded('abcdefghij', 7)), '"abcde"');
  assert.equal(encodeJson(new Bounded('x'.repeat(1_000_000), 12)), `"${'x'.repeat(10)}"`);
  assert.equal(encodeJson(new Bounded('abc', 5)), '"abc"');
  assert.equal(encodeJson(new Bounded('abc', 4)), '"ab"');
  assert.equal(encodeJson(new Bounded('abc', 1)), '""');
});

test('a Bounded string is never cut inside a surrogate pair or an escape', () => {
  assert.equal(encodeJson(new Bounded('😀😀😀', 5)), '"😀"');
  assert.equal(encodeJson(new Bounded('😀😀😀', 3)), '""');
  assert.equal(encodeJson(new Bounded('\u0001\u0001\u0001', 10)), '"\\u0001"');
  assert.equal(encodeJson(new Bounded('a\n\n', 5)), '"a\\n"');
  assert.equal(encodeJson(new Bounded('a\n\n', 4)), '"a"');
  // A lone surrogate is a character of its own, written as an escape.
  assert.equal(encodeJson(new Bounded('\ud800a', 8)), '"\\ud800"');
  assert.equal(encodeJson(new Bounded('\udc00\ud800', 9)), '"\\udc00"');
  // A lone high half before a character above the low halves' range is no pair: 8 keeps it alone.
  assert.equal(encodeJson(new Bounded('\ud800\uff21x', 8)), '"\\ud800"');
  // Pairs at both ends of the range are written raw, two units each: two fit in 6.
  assert.equal(encodeJson(new Bounded('\u{10FFFF}'.repeat(3), 6)), `"${'\u{10FFFF}'.repeat(2)}"`);
  assert.equal(encodeJson(new Bounded('\u{10000}'.repeat(3), 6)), `"${'\u{10000}'.repeat(2)}"`);
});

test('a short escape counts two characters and a character from U+E000 up one', () => {
  for (const [char, escaped] of [
    ['\b', '\\b'],
    ['\f', '\\f'],
    ['\r', '\\r'],
  ] as const) {
    assert.equal(encodeJson(new Bounded(char.repeat(3), 6)), `"${escaped}${escaped}"`);
  }
  assert.equal(encodeJson(new Bounded('ＡＢＣ', 4)), '"ＡＢ"');
});

test('a Bounded array keeps the longest run of first items that fits its room', () => {
  const next = seededRandom(2312);
  for (let round = 0; round < 300; round++) {
    const items = Array.from({ length: next(1, 12) }, () =>
      next(0, 1) === 0 ? next(-999, 99_999) : randomText(next, 6),
    );
    const written = items.map((item) => JSON.stringify(item));
    const whole = JSON.stringify(items).length;
    for (let room = (written[0]?.length ?? 0) + 2; room <= whole + 1; room++) {
      assert.equal(
        encodeJson(new Bounded(items, room)),
        longestFittingRun('[', written, ']', room),
        `${JSON.stringify(items)} in ${room}`,
      );
    }
  }
});

test('a Bounded object keeps the longest run of first members that fits its room', () => {
  const next = seededRandom(2313);
  for (let round = 0; round < 300; round++) {
    const members = new Map<string, unknown>();
    for (let k = next(1, 10); k > 0; k--)
      members.set(randomText(next, 5), next(0, 1) === 0 ? next(-99, 99_999) : randomText(next, 5));
    const written = [...members].map(
      ([name, member]) => `${JSON.stringify(name)}:${JSON.stringify(member)}`,
    );
    const whole = JSON.stringify(Object.fromEntries(members)).length;
    for (let room = (written[0]?.length ?? 0) + 2; room <= whole + 1; room++) {
      assert.equal(
        encodeJson(new Bounded(members, room)),
        longestFittingRun('{', written, '}', room),
        `${JSON.stringify([...members])} in ${room}`,
      );
    }
  }
});

test('a first member too large alone is cut to what the brackets leave, its name too', () => {
  assert.equal(encodeJson(new Bounded(['x'.repeat(100), 1], 10)), '["xxxxxx"]');
  assert.equal(encodeJson(new Bounded([[1, 2, 3, 4, 5, 6, 7]], 9)), '[[1,2,3]]');
  // The name leaves room for its colon and a one-character value.
  assert.equal(encodeJson(new Bounded(new Map([['k'.repeat(100), 1]]), 10)), '{"kkkk":1}');
  // The member's value takes what the braces, its name and the colon leave: 20 − 2 − 3 − 1 = 14.
  assert.equal(
    encodeJson(new Bounded(new Map([['a', 'x'.repeat(100)]]), 20)),
    `{"a":"${'x'.repeat(12)}"}`,
  );
});

test('a first member cut to fit keeps its name, whatever its value holds', () => {
  assert.equal(
    encodeJson(new Bounded(new Map([['data', new Map([['x', 'y'.repeat(100)]])]]), 24)),
    '{"data":{"x":"yyyyyyy"}}',
  );
  assert.equal(
    encodeJson(new Bounded(new Map([['items', Array.from({ length: 100 }, (_, i) => i)]]), 30)),
    '{"items":[0,1,2,3,4,5,6,7,8]}',
  );
});

test('a later member is kept whole or not at all', () => {
  // [1,""] would fit in 7, but only by cutting the second item.
  assert.equal(encodeJson(new Bounded([1, '\u0001\u0001'], 7)), '[1]');
  assert.equal(encodeJson(new Bounded([1, ['a', 'b', 'c']], 9)), '[1]');
  assert.equal(
    encodeJson(
      new Bounded(
        new Map<string, unknown>([
          ['a', 1],
          ['b', 'xxxxxx'],
        ]),
        12,
      ),
    ),
    '{"a":1}',
  );
  assert.equal(
    encodeJson(
      new Bounded(
        new Map<string, unknown>([
          ['a', 1],
          ['bbbbbb', 2],
        ]),
        12,
      ),
    ),
    '{"a":1}',
  );
});

test('numbers, booleans and null are never cut, so only they pass the room', () => {
  assert.equal(encodeJson(new Bounded(1234567, 3)), '1234567');
  assert.equal(encodeJson(new Bounded([true, 1], 4)), '[true]');
  assert.equal(encodeJson(new Bounded(new Map([['a', null]]), 4)), '{"":null}');
});

test('a Bounded inside a Bounded takes the smaller room', () => {
  assert.equal(encodeJson(new Bounded(new Bounded('abcdefghij', 100), 6)), '"abcd"');
  assert.equal(encodeJson(new Bounded(new Bounded('abcdefghij', 6), 100)), '"abcd"');
});

test('a container with more room keeps every Bounded member, cut under its own limit or not', () => {
  // The detail list of a 422: each error's input cut on its own, every error kept.
  const input = new Bounded('abcdef', 4);
  assert.equal(encodeJson([input, 'x', input]), '["ab","x","ab"]');
  assert.equal(
    encodeJson(
      new Map([
        ['a', input],
        ['b', input],
      ]),
    ),
    '{"a":"ab","b":"ab"}',
  );
  assert.equal(encodeJson(new Bounded([input, 'x', input], 100)), '["ab","x","ab"]');
  // Under the outer room, the same member is cut by the outer limit, and a later one left out.
  assert.equal(encodeJson(new Bounded([1, new Bounded('abcdef', 40)], 6)), '[1]');
});

/** Nested arrays, Maps and strings (no numbers: those are never cut). Names differ in their first letter. */
function randomNested(next: (min: number, max: number) => number, depth: number): unknown {
  const kind = depth >= 4 ? 0 : next(0, 2);
  if (kind === 0) return randomText(next, 8);
  if (kind === 1) return Array.from({ length: next(0, 5) }, () => randomNested(next, depth + 1));
  const members = new Map<string, unknown>();
  for (let k = next(0, 5); k > 0; k--)
    members.set(
      String.fromCharCode(0x61 + members.size) + randomText(next, 4),
      randomNested(next, depth + 1),
    );
  return members;
}

/** `written` is `value` with strings shortened and members left off the end, nothing else. */
function assertCutOf(written: unknown, value: unknown, where: string): void {
  if (typeof value === 'string') {
    assert.ok(typeof written === 'string' && value.startsWith(written), where);
  } else if (Array.isArray(value)) {
    assert.ok(Array.isArray(written) && written.length <= value.length, where);
    written.forEach((item, k) => assertCutOf(item, value[k], `${where}[${k}]`));
    // Only the first of its items can be cut; the others are whole.
    written
      .slice(1)
      .forEach((item, k) =>
        assert.equal(JSON.stringify(item), JSON.stringify(toPlain(value[k + 1])), where),
      );
  } else {
    const members = [...(value as Map<string, unknown>)];
    const kept = Object.entries(written as Record<string, unknown>);
    assert.ok(kept.length <= members.length, where);
    kept.forEach(([name, member], k) => {
      const [originalName = '', original] = members[k] ?? [];
      assert.ok(originalName.startsWith(name), where);
      assertCutOf(member, original, `${where}.${name}`);
      if (k > 0)
        assert.ok(
          name === originalName && JSON.stringify(member) === JSON.stringify(toPlain(original)),
          where,
        );
    });
  }
}

function toPlain(value: unknown): unknown {
  if (value instanceof Map)
    return Object.fromEntries([...value].map(([name, member]) => [name, toPlain(member)]));
  return Array.isArray(value) ? value.map(toPlain) : value;
}

test('a Bounded value never takes more than its room, and shows only a cut of what it holds', () => {
  const next = seededRandom(2314);
  for (let round = 0; round < 300; round++) {
    const value = randomNested(next, 0);
    const whole = JSON.stringify(toPlain(value)).length;
    for (let room = 0; room <= whole + 1; room++) {
      const written = encodeJson(new Bounded(value, room));
      // The least any value can be written as: its first members' brackets, emptied.
      if (written.length > room)
        assert.equal(written, skeleton(value), `${JSON.stringify(toPlain(value))} in ${room}`);
      assertCutOf(JSON.parse(written), value, `${JSON.stringify(toPlain(value))} in ${room}`);
      if (room >= whole) assert.equal(written, JSON.stringify(toPlain(value)));
    }
  }
});

function skeleton(value: unknown): string {
  if (typeof value === 'string') return '""';
  if (Array.isArray(value)) return value.length === 0 ? '[]' : `[${skeleton(value[0])}]`;
  const first = [...(value as Map<string, unknown>)][0];
  return first === undefined ? '{}' : `{"":${skeleton(first[1])}}`;
}
