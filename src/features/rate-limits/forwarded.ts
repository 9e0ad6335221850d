// The Forwarded header (RFC 7239), read exactly as its grammar says, because a reader that is
// lenient where a proxy is careless lets a client choose the name it is counted under:
//
//   Forwarded         = 1#forwarded-element            (elements separated by "," with optional
//   forwarded-element = [ forwarded-pair ] *( ";" [ forwarded-pair ] )   whitespace around it)
//   forwarded-pair    = token "=" value                (no whitespace around ";" or "=")
//   value             = token / quoted-string          (quoted-pair: "\" and the character escaped)
//
// A `;` or `,` inside a quoted string is part of the string. Parameter names are case-insensitive,
// and each may occur once per element: an element with two `for=` (a proxy that wrote a client's
// text after its own `for=`, unquoted) is malformed, and cannot say whom the request came from. An
// element that breaks the grammar is malformed, and the reading goes on after the next comma that
// is outside a quoted string; an unterminated quoted string makes the rest of the line one
// malformed element. Empty list elements (`a, , b`) are ignored, as every list header's are.
//
// A `for=` value is a node: an IPv4 address, a bracketed IPv6 address (which, like a port, needs
// quotes), `unknown`, or an obfuscated identifier (`_hidden`), each with an optional port or
// obfuscated port. Only an address names a client; `unknown` and an obfuscated identifier say that
// the proxy will not, and anything else is malformed.
import { isIP } from 'node:net';
import { canonicalAddress } from '../../http/connections/ip-address.js';

/** An element that breaks the grammar, or names a parameter twice. */
export const MALFORMED = 'malformed';

/** A forwarded-element's parameters, names in lower case; or MALFORMED. */
export type ForwardedElement = ReadonlyMap<string, string> | typeof MALFORMED;

/** RFC 9110's tchar: the characters of a token. */
const TCHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]$/;
const isTchar = (c: string | undefined): boolean => c !== undefined && TCHAR.test(c);
const isOws = (c: string | undefined): boolean => c === ' ' || c === '\t';

/** qdtext and the characters a quoted-pair may escape: HTAB, SP, VCHAR, obs-text; qdtext not `"` or `\`. */
function quotable(code: number): boolean {
  return code === 0x09 || (code >= 0x20 && code <= 0x7e) || (code >= 0x80 && code <= 0xff);
}

interface Cursor {
  readonly text: string;
  at: number;
}

function token(cursor: Cursor): string | undefined {
  const start = cursor.at;
  while (isTchar(cursor.text[cursor.at])) cursor.at += 1;
  return cursor.at > start ? cursor.text.slice(start, cursor.at) : undefined;
}

/** A quoted-string's content, unescaped, with the cursor past its closing quote; undefined if it is not one. */
function quotedString(cursor: Cursor): string | undefined {
  const { text } = cursor;
  let value = '';
  for (let i = cursor.at + 1; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '"') {
      cursor.at = i + 1;
      return value;
    }
    if (c === '\\') i += 1;
    const char = text[i];
    if (char === undefined || !quotable(char.charCodeAt(0))) return undefined;
    value += char;
  }
  return undefined;
}

/** One element's pairs, the cursor left after them; undefined if the grammar breaks. */
function element(cursor: Cursor): ForwardedElement | undefined {
  const pairs = new Map<string, string>();
  let duplicate = false;
  for (;;) {
    const name = token(cursor)?.toLowerCase();
    if (name !== undefined) {
      if (cursor.text[cursor.at] !== '=') return undefined;
      cursor.at += 1;
      const value = cursor.text[cursor.at] === '"' ? quotedString(cursor) : token(cursor);
      if (value === undefined) return undefined;
      duplicate ||= pairs.has(name);
      pairs.set(name, value);
    }
    if (cursor.text[cursor.at] !== ';') break;
    cursor.at += 1;
  }
  return duplicate ? MALFORMED : pairs;
}

/** Moves the cursor to the next comma outside a quoted string, or to the end. */
function skipToNextElement(cursor: Cursor): void {
  const { text } = cursor;
  while (cursor.at < text.length && text[cursor.at] !== ',') {
    if (text[cursor.at] === '"' && quotedString(cursor) !== undefined) continue;
    cursor.at = text[cursor.at] === '"' ? text.length : cursor.at + 1;
  }
}

/** The elements of one Forwarded field line, in order, empty list elements left out. */
export function forwardedElements(line: string): ForwardedElement[] {
  const cursor: Cursor = { text: line, at: 0 };
  const elements: ForwardedElement[] = [];
  for (;;) {
    while (isOws(line[cursor.at]) || line[cursor.at] === ',') cursor.at += 1;
    if (cursor.at >= line.length) return elements;
    let parsed = element(cursor);
    while (isOws(line[cursor.at])) cursor.at += 1;
    if (cursor.at < line.length && line[cursor.at] !== ',') parsed = undefined;
    if (parsed === undefined) {
      skipToNextElement(cursor);
      parsed = MALFORMED;
    }
    elements.push(parsed);
  }
}

/** After a node's name: a port, or an obfuscated one. */
const PORT = /^:(\d{1,5}|_[A-Za-z0-9._-]+)$/;

/**
 * What a `for=` node names: its address (canonical), or undefined for `unknown`, an obfuscated
 * identifier and a malformed node alike: none of them is an address to count a client under.
 */
export function nodeAddress(node: string): string | undefined {
  let name: string;
  let rest: string;
  if (node.startsWith('[')) {
    const close = node.indexOf(']');
    if (close === -1) return undefined;
    name = node.slice(1, close);
    rest = node.slice(close + 1);
    if (isIP(name) !== 6) return undefined;
  } else {
    const colon = node.indexOf(':');
    name = colon === -1 ? node : node.slice(0, colon);
    rest = colon === -1 ? '' : node.slice(colon);
    if (isIP(name) !== 4) return undefined;
  }
  if (rest !== '' && !PORT.test(rest)) return undefined;
  return canonicalAddress(name);
}
