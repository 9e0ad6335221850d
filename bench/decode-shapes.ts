// The bodies `npm run bench:decode` decodes: the shapes a hostile client would pick to make the
// Python-compatible decoder slow (many tiny tokens, escapes, numbers that are not plain doubles),
// and ordinary bodies. Each is built to about 1 MiB, the body limit, except the ordinary ones.

export interface DecodeShape {
  readonly name: string;
  readonly bytes: Buffer;
  /** How the baseline turns the bytes into text for JSON.parse (a UTF-16 body is not UTF-8). */
  readonly encoding: 'utf8' | 'utf16le';
}

const MIB = 1024 * 1024;

/** `open item sep item sep … close`, as many items as fit in size bytes. */
function repeated(
  open: string,
  item: (k: number) => string,
  sep: string,
  close: string,
  size = MIB,
): string {
  const parts: string[] = [];
  let length = open.length + close.length;
  for (let k = 0; ; k++) {
    const next = item(k);
    if (length + next.length + sep.length > size) break;
    parts.push(next);
    length += next.length + sep.length;
  }
  return open + parts.join(sep) + close;
}

const TODO_BODY = '{"title": "Buy milk", "done": false}';

/** A few KB of everyday JSON: nested objects, arrays, strings with some non-ASCII, ints, floats, literals. */
function mixedDocument(): string {
  const items = Array.from({ length: 12 }, (_, k) => ({
    id: 1000 + k,
    title: `Item ${k}: café, naïve — ${'x'.repeat(k)}`,
    done: k % 3 === 0,
    tags: ['home', 'work', 'errand'].slice(0, 1 + (k % 3)),
    price: 10 + k * 0.25,
    note: k % 4 === 0 ? null : `line one\nline "two" ${k}`,
  }));
  return JSON.stringify(
    { owner: { name: 'Zoë', id: 42 }, items, total: 12, version: '1.2.3' },
    null,
    1,
  );
}

function utf16le(text: string): Buffer {
  return Buffer.from(text, 'utf16le');
}

/** The shapes at about `size` bytes each (the bench: 1 MiB; the differential test: smaller, same structure). */
export function decodeShapes(size = MIB): DecodeShape[] {
  const many = (open: string, item: (k: number) => string, sep: string, close: string): string =>
    repeated(open, item, sep, close, size);
  const utf8 = (name: string, text: string): DecodeShape => ({
    name,
    bytes: Buffer.from(text, 'utf8'),
    encoding: 'utf8',
  });
  return [
    utf8(
      '500k zeros in an array',
      many('[', () => '0', ',', ']'),
    ),
    utf8(
      '300k empty objects',
      many('[', () => '{}', ',', ']'),
    ),
    utf8('500k \\" escapes in a string', `"${'\\"'.repeat(Math.floor((500_000 * size) / MIB))}"`),
    utf8(
      '\\u escapes (é, surrogate pairs)',
      many('"', (k) => (k % 2 === 0 ? '\\u00e9' : '\\ud83d\\ude00'), '', '"'),
    ),
    utf8('one long ASCII string', `"${'a'.repeat(size - 2)}"`),
    utf8('one long non-ASCII string', `"${'é😀'.repeat(Math.floor((size - 2) / 6))}"`),
    utf8(
      'an object of 100k short keys',
      many('{', (k) => `"k${k}":${k % 10}`, ',', '}'),
    ),
    utf8(
      'small objects with the same keys',
      many('[', (k) => `{"id":${k},"ok":true}`, ',', ']'),
    ),
    utf8(
      '150k one-member objects',
      many('[', () => '{"":0}', ',', ']'),
    ),
    utf8(
      '200k one-item arrays',
      many('[', () => '[0]', ',', ']'),
    ),
    utf8(
      'nesting 512 deep, repeated',
      many('[', () => `${'['.repeat(511)}${']'.repeat(511)}`, ',', ']'),
    ),
    utf8(
      'short floats',
      many('[', (k) => `${k % 100}.${k % 7}5`, ',', ']'),
    ),
    utf8(
      'long floats and exponents',
      many('[', (k) => `${(k * 1.2345678901234567e-7).toExponential()}`, ',', ']'),
    ),
    utf8(
      'integers of 20 to 30 digits',
      many('[', (k) => `${'1234567890'.repeat(2 + (k % 2))}`, ',', ']'),
    ),
    utf8(
      'true, false, null',
      many('[', (k) => ['true', 'false', 'null'][k % 3] as string, ',', ']'),
    ),
    utf8(
      'whitespace-heavy (indented)',
      many(
        '[\n',
        (k) =>
          `        {\n                "a": [\n                        ${k},\n                        "s"\n                ]\n        }`,
        ',\n',
        '\n]',
      ),
    ),
    {
      name: 'UTF-16 array of strings',
      bytes: utf16le(repeated('[', (k) => `"w${k}"`, ',', ']', size / 2)),
      encoding: 'utf16le',
    },
    utf8('a TodoIn body', TODO_BODY),
    utf8('a few KB of mixed JSON', mixedDocument()),
  ];
}
