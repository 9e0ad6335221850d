// HAR 1.2 (the HTTP Archive browsers' developer tools, mitmproxy and Playwright save) as the kit
// reads it: only the members a replay needs, each checked, so that a file that is not a HAR fails
// with one line naming the member, never with a stack. What each member means:
// http://www.softwareishard.com/blog/har-12-spec/. Custom members start with an underscore, as
// the format asks: `_encoding` ("base64") on postData for a body that is not UTF-8 text, and
// `_truncated` on postData and content for a body cut at the recorder's bound.

export interface HarHeader {
  readonly name: string;
  readonly value: string;
}

export interface HarPostData {
  readonly mimeType: string;
  readonly text?: string;
  readonly params?: readonly HarHeader[];
  /** "base64" when `text` holds the body's bytes in base64 (`encoding` is read too). */
  readonly _encoding?: string;
  readonly _truncated?: boolean;
}

export interface HarRequest {
  readonly method: string;
  readonly url: string;
  readonly httpVersion: string;
  readonly cookies: readonly HarHeader[];
  readonly headers: readonly HarHeader[];
  readonly queryString: readonly HarHeader[];
  readonly postData?: HarPostData;
  readonly headersSize: number;
  readonly bodySize: number;
}

export interface HarContent {
  readonly size: number;
  readonly mimeType: string;
  readonly text?: string;
  readonly encoding?: string;
  readonly _truncated?: boolean;
}

export interface HarResponse {
  readonly status: number;
  readonly statusText: string;
  readonly httpVersion: string;
  readonly cookies: readonly HarHeader[];
  readonly headers: readonly HarHeader[];
  readonly content: HarContent;
  readonly redirectURL: string;
  readonly headersSize: number;
  readonly bodySize: number;
  readonly comment?: string;
}

export interface HarEntry {
  readonly startedDateTime: string;
  readonly time: number;
  readonly request: HarRequest;
  readonly response: HarResponse;
  readonly cache: Record<string, never>;
  readonly timings: { readonly send: number; readonly wait: number; readonly receive: number };
}

export interface Har {
  readonly log: {
    readonly version: string;
    readonly creator: { readonly name: string; readonly version: string };
    readonly entries: readonly HarEntry[];
  };
}

/** What a replay needs of an entry; the rest of it is read only where the kit shows it. */
export interface HarRequestRead {
  readonly method: string;
  readonly url: string;
  readonly headers: readonly HarHeader[];
  readonly postData?: HarPostData | undefined;
}

/** A file the kit cannot read as a HAR, said in one line. */
export class HarError extends Error {}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function member(parent: Json, key: string, where: string): unknown {
  if (!(key in parent)) throw new HarError(`${where}.${key} is missing`);
  return parent[key];
}

function objectAt(parent: Json, key: string, where: string): Json {
  const value = member(parent, key, where);
  if (!isObject(value)) throw new HarError(`${where}.${key} is not an object`);
  return value;
}

function stringAt(parent: Json, key: string, where: string): string {
  const value = member(parent, key, where);
  if (typeof value !== 'string') throw new HarError(`${where}.${key} is not a string`);
  return value;
}

function pairsAt(parent: Json, key: string, where: string): HarHeader[] {
  const value = parent[key];
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new HarError(`${where}.${key} is not a list`);
  return value.map((pair: unknown, index) => {
    const at = `${where}.${key}[${index}]`;
    if (!isObject(pair)) throw new HarError(`${at} is not an object`);
    return { name: stringAt(pair, 'name', at), value: stringAt(pair, 'value', at) };
  });
}

function postDataAt(request: Json, where: string): HarPostData | undefined {
  const value = request.postData;
  if (value === undefined || value === null) return undefined;
  const at = `${where}.postData`;
  if (!isObject(value)) throw new HarError(`${at} is not an object`);
  const text = value.text;
  if (text !== undefined && typeof text !== 'string')
    throw new HarError(`${at}.text is not a string`);
  const encoding = value._encoding ?? value.encoding;
  if (encoding !== undefined && typeof encoding !== 'string')
    throw new HarError(`${at}._encoding is not a string`);
  return {
    mimeType: typeof value.mimeType === 'string' ? value.mimeType : '',
    text,
    params: pairsAt(value, 'params', at),
    _encoding: encoding,
    _truncated: value._truncated === true,
  };
}

/** The requests of a HAR file's text, in the file's order; a HarError says what is wrong. */
export function readHarRequests(text: string): HarRequestRead[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // The parser quotes the text it stopped at, which may hold line breaks: one line still.
    throw new HarError(`not JSON (${message.replace(/[\u0000-\u001f]+/g, ' ')})`);
  }
  if (!isObject(document)) throw new HarError('not a HAR: the file is not a JSON object');
  const log = objectAt(document, 'log', '$');
  const entries = member(log, 'entries', '$.log');
  if (!Array.isArray(entries)) throw new HarError('$.log.entries is not a list');
  return entries.map((entry: unknown, index) => {
    const where = `$.log.entries[${index}]`;
    if (!isObject(entry)) throw new HarError(`${where} is not an object`);
    const request = objectAt(entry, 'request', where);
    const at = `${where}.request`;
    return {
      method: stringAt(request, 'method', at),
      url: stringAt(request, 'url', at),
      headers: pairsAt(request, 'headers', at),
      postData: postDataAt(request, at),
    };
  });
}
