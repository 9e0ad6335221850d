// The one place that turns an error into a response, in the active error format. Routes throw;
// nothing else builds an error body. An internal failure's text never leaves this file: it is
// logged with the request id, and the client gets a fixed body.
//
// Every format renders from the error catalogue. The parts of a body that depend only on the wire
// code are written once, at start-up, so an error on a hot path (a 404, a 422) costs one string
// concatenation around its own text.
import { jsonString } from '../common/json-string.js';
import { catalogueEntries, ERROR_CATALOGUE, problemType, type ErrorCode } from './catalogue.js';
import { ApiError, InvalidRequest, type ValidationItem } from './errors.js';
import { encodeJson, encodeJsonWithin } from './json/json-encode.js';

export const ERROR_FORMAT_NAMES = ['default', 'unified', 'problem'] as const;
export type ErrorFormatName = (typeof ERROR_FORMAT_NAMES)[number];

export interface ErrorFormat {
  readonly name: ErrorFormatName;
  /**
   * Unified format only: turn unhandled failures into the INTERNAL envelope instead of plain text.
   * (Problem details always answer a failure with a JSON problem.)
   */
  readonly catchAll: boolean;
}

export interface RenderedError {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly contentType: string;
  readonly body: string;
  /** True when the error was not one we meant to raise: the caller logs it in full. */
  readonly unexpected: boolean;
}

export const JSON_TYPE = 'application/json';
export const PROBLEM_JSON_TYPE = 'application/problem+json';

/** The body around an error's own text, per wire code: `head + JSON text + tail`. */
interface Frame {
  readonly status: number;
  readonly unifiedHead: string;
  readonly problemHead: string;
  readonly problemTail: string;
}

const FRAMES = Object.fromEntries(
  catalogueEntries().map(([code, entry]) => [
    code,
    {
      status: entry.status,
      unifiedHead: `{"error":{"code":${encodeJson(code)},"message":`,
      problemHead: `{"type":${encodeJson(problemType(code))},"title":${encodeJson(entry.title)},"status":${entry.status},"detail":`,
      problemTail: `,"code":${encodeJson(code)}`,
    },
  ]),
) as Record<ErrorCode, Frame>;

const PLAIN_500: RenderedError = {
  status: 500,
  headers: {},
  contentType: 'text/plain; charset=utf-8',
  body: 'Internal Server Error',
  unexpected: true,
};
const UNIFIED_500: RenderedError = {
  ...PLAIN_500,
  contentType: JSON_TYPE,
  body: `${FRAMES.INTERNAL.unifiedHead}${encodeJson(ERROR_CATALOGUE.INTERNAL.message)}}}`,
};
const PROBLEM_500: RenderedError = {
  ...PLAIN_500,
  contentType: PROBLEM_JSON_TYPE,
  body: `${FRAMES.INTERNAL.problemHead}${encodeJson(ERROR_CATALOGUE.INTERNAL.message)}${FRAMES.INTERNAL.problemTail}}`,
};

export function renderError(error: unknown, format: ErrorFormat): RenderedError {
  switch (format.name) {
    case 'default':
      return renderDefault(error);
    case 'unified':
      return renderUnified(error, format.catchAll);
    case 'problem':
      return renderProblem(error);
  }
}

/**
 * The validation items of an error, when it is a validation failure: thrown (an ApiError) or
 * handed back (InvalidRequest).
 */
function validationItems(error: unknown): readonly ValidationItem[] | undefined {
  if (error instanceof InvalidRequest) return error.items;
  return error instanceof ApiError && ERROR_CATALOGUE[error.code].inDefault === 'validation'
    ? error.items
    : undefined;
}

/** The reference's format: the catalogue entry says how it shows each error (DefaultShape). */
function renderDefault(error: unknown): RenderedError {
  const items = validationItems(error);
  if (items !== undefined)
    return rendered(422, JSON_TYPE, `{"detail":[${items.map(defaultItemJson).join(',')}]}`);
  if (!(error instanceof ApiError)) return PLAIN_500;
  switch (ERROR_CATALOGUE[error.code].inDefault) {
    case 'coded':
      return rendered(
        error.status,
        JSON_TYPE,
        `{"detail":{"code":${encodeJson(error.code)},"message":${encodeJson(error.detail)}}}`,
        error.headers,
      );
    case 'unhandled':
      // Not recognised, as in the reference: the plain 500, and the failure logged in full.
      return PLAIN_500;
    default:
      return rendered(
        error.status,
        JSON_TYPE,
        `{"detail":${encodeJson(error.detail)}}`,
        error.headers,
      );
  }
}

/**
 * The reference echoes a rejected input whole; we echo at most this many characters of each (a
 * 1 MiB body would otherwise come back once per item): what a client needs to see what it sent,
 * at a cost that does not grow with the body.
 */
export const ECHO_CHARS_MAX = 64 * 1024;

/**
 * One item of FastAPI's `detail`, its members in pydantic's order, the input echoed within
 * ECHO_CHARS_MAX. Written from its known members rather than by the encoder's walk over an object
 * (its keys, then each name looked up): a 422 writes one or more on every rejected request.
 */
function defaultItemJson(item: ValidationItem): string {
  const ctx = item.ctx === undefined ? '' : `,"ctx":${encodeJson(item.ctx)}`;
  const input = encodeJsonWithin(item.input, ECHO_CHARS_MAX);
  return `{"type":${jsonString(item.type)},"loc":${encodeJson(item.loc)},"msg":${jsonString(item.msg)},"input":${input}${ctx}}`;
}

function renderUnified(error: unknown, catchAll: boolean): RenderedError {
  const items = validationItems(error);
  if (items !== undefined) {
    const fields = items
      .map(
        (item) => `{"field":${jsonString(item.loc.join('.'))},"message":${jsonString(item.msg)}}`,
      )
      .join(',');
    const body = `${FRAMES.VALIDATION_FAILED.unifiedHead}${encodeJson(ERROR_CATALOGUE.VALIDATION_FAILED.message)},"fields":[${fields}]}}`;
    return rendered(422, JSON_TYPE, body);
  }
  if (error instanceof ApiError) return unified(error.code, error.detail, error.headers);
  return catchAll ? UNIFIED_500 : PLAIN_500;
}

function unified(
  code: ErrorCode,
  message: string,
  headers?: Readonly<Record<string, string>>,
): RenderedError {
  const frame = FRAMES[code];
  return rendered(frame.status, JSON_TYPE, `${frame.unifiedHead}${encodeJson(message)}}}`, headers);
}

/** RFC 9457 problem details: type, title, status, detail, and our wire code as the `code` member. */
function renderProblem(error: unknown): RenderedError {
  const items = validationItems(error);
  if (items !== undefined) {
    const errors = `,"errors":[${items.map(problemItemJson).join(',')}]`;
    return problem('VALIDATION_FAILED', ERROR_CATALOGUE.VALIDATION_FAILED.message, errors);
  }
  if (error instanceof ApiError) return problem(error.code, error.detail, '', error.headers);
  return PROBLEM_500;
}

function problem(
  code: ErrorCode,
  detail: string,
  extra: string,
  headers?: Readonly<Record<string, string>>,
): RenderedError {
  const frame = FRAMES[code];
  return rendered(
    frame.status,
    PROBLEM_JSON_TYPE,
    `${frame.problemHead}${encodeJson(detail)}${frame.problemTail}${extra}}`,
    headers,
  );
}

/**
 * One item of a problem's `errors`, as in RFC 9457's own example: what is wrong (`detail`), where:
 * `parameter` for a path parameter, `pointer` (a JSON Pointer, as a URI fragment) into the body
 * otherwise, and pydantic's `type` of the failure.
 */
function problemItemJson(item: ValidationItem): string {
  // A JSON syntax error's loc names a character offset, not a member: it points at the whole body.
  const where =
    item.loc[0] === 'path'
      ? `"parameter":${jsonString(String(item.loc[1]))}`
      : `"pointer":${item.type === 'json_invalid' ? '"#"' : pointerJson(item.loc)}`;
  return `{"detail":${jsonString(item.msg)},${where},"type":${jsonString(item.type)}}`;
}

/** The JSON text of the pointer to where `loc` names, below its first member (`body`): `"#/a/0"`. */
function pointerJson(loc: readonly (string | number)[]): string {
  let pointer = '#';
  for (let i = 1; i < loc.length; i++) pointer += `/${pointerMember(String(loc[i]))}`;
  return jsonString(pointer);
}

/**
 * A member as a pointer in a URI fragment writes it: RFC 6901's escapes (~0, ~1), then
 * percent-encoding. A member made only of letters, digits, '-', '.' and '_' (a field name, an
 * index: what a location almost always holds) is the same after both, and is taken as it is: the
 * two replaceAll calls and encodeURIComponent cost a problem 422 about 2,700 machine instructions
 * an item (callgrind), most of the work of writing it.
 */
function pointerMember(member: string): string {
  for (let i = 0; i < member.length; i++) {
    const c = member.charCodeAt(i);
    const plain =
      (c >= 97 && c <= 122) ||
      (c >= 65 && c <= 90) ||
      (c >= 48 && c <= 57) ||
      c === 45 ||
      c === 46 ||
      c === 95;
    if (!plain) return encodeURIComponent(member.replaceAll('~', '~0').replaceAll('/', '~1'));
  }
  return member;
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
function rendered(
  status: number,
  contentType: string,
  body: string,
  headers: Readonly<Record<string, string>> = NO_HEADERS,
): RenderedError {
  return { status, headers, contentType, body, unexpected: false };
}
