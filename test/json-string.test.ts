// jsonString, which writes the access line's fields and every string of a JSON answer: the same
// text as JSON.stringify, whatever the string holds; jsonStringContent, the same without its
// quotes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { jsonString, jsonStringContent } from '../src/common/json-string.js';

describe('jsonString', () => {
  test('jsonString writes what JSON.stringify writes, for every UTF-16 code unit and around it', () => {
    for (let unit = 0; unit <= 0xffff; unit++) {
      const c = String.fromCharCode(unit);
      for (const text of [c, `/todos/${c}`, `${c}x`])
        assert.equal(jsonString(text), JSON.stringify(text), `code unit ${unit}`);
    }
    for (const text of [
      '',
      'GET',
      '/todos/{todo_id}',
      'a1b2-c3:d4.e5_f6',
      'é 😀',
      '\ud800 alone',
      'x'.repeat(300),
      'Buy "milk"\\'.repeat(3),
    ]) {
      assert.equal(jsonString(text), JSON.stringify(text));
    }
  });

  test('jsonStringContent writes what JSON.stringify writes between its quotes, for every UTF-16 code unit and around it', () => {
    const inner = (text: string): string => JSON.stringify(text).slice(1, -1);
    for (let unit = 0; unit <= 0xffff; unit++) {
      const c = String.fromCharCode(unit);
      for (const text of [c, `/todos/${c}`, `${c}x`])
        assert.equal(jsonStringContent(text), inner(text), `code unit ${unit}`);
    }
    for (const text of ['', '/nowhere/"quoted"\\back/{x}', 'é 😀', '\ud800 alone'])
      assert.equal(jsonStringContent(text), inner(text));
  });
});
