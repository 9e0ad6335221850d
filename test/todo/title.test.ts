// Titles as stored (src/todo/title.ts): a JSON string literal, read back by a fast path for the
// literals that need no escape and by JSON.parse for the rest, with the same outcome as JSON.parse
// alone for any stored text, well formed or not.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeTitle, encodeTitle } from '../../src/todo/title.js';

/** What decoding did before the fast path: JSON.parse, and a refusal of anything but a string. */
function byJsonParse(stored: string): string {
  const title: unknown = JSON.parse(stored);
  if (typeof title !== 'string') throw new Error('a stored title is not a JSON string');
  return title;
}

function outcome(
  decode: (stored: string) => string,
  stored: string,
): { title: string } | { refused: true } {
  try {
    return { title: decode(stored) };
  } catch {
    return { refused: true };
  }
}

describe('stored titles', () => {
  test('every UTF-16 code unit survives the round trip, alone and among others', () => {
    for (let unit = 0; unit <= 0xffff; unit++) {
      const c = String.fromCharCode(unit);
      for (const title of [c, `Buy ${c} milk`])
        assert.equal(decodeTitle(encodeTitle(title)), title, `code unit ${unit}`);
    }
    for (const title of [
      '',
      'Buy milk',
      'é 😀',
      '\ud800 alone',
      '"quoted"',
      'back\\slash',
      'x'.repeat(10_000),
    ]) {
      assert.equal(decodeTitle(encodeTitle(title)), title);
    }
  });

  test('any stored text decodes as JSON.parse decodes it, or is refused as JSON.parse refuses it', () => {
    const stored = [
      '',
      '"',
      '""',
      '"a',
      'a"',
      '"a"b"',
      '"a\nb"',
      '"a\tb"',
      '"a\u001fb"',
      '"a\u007fb"',
      '"\\"',
      '"a\\"',
      '"\\u0041"',
      '"\\ud800"',
      '12',
      'null',
      'true',
      '["a"]',
      '{"a":1}',
      ' "a"',
      '"a" ',
      '"\ud800"',
      '"\u2028"',
      '"\u0000"',
      '"plain title"',
    ];
    for (const text of stored)
      assert.deepEqual(
        outcome(decodeTitle, text),
        outcome(byJsonParse, text),
        JSON.stringify(text),
      );
  });
});
