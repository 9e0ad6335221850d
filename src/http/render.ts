// The one place that turns an error into a response, in the active error format. Routes throw;
// nothing else builds an error body. An internal failure's text never leaves this file: it is
// logged with the request id, and the client gets a fixed body.
import { DomainError, HttpError, RequestValidationError } from './errors.js';
import { encodeJson } from './json-encode.js';

export type ErrorFormatName = 'default' | 'unified';

export interface ErrorFormat {
  readonly name: ErrorFormatName;
  /** Unified format only: turn unhandled failures into the INTERNAL envelope instead of plain text. */
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
  body: encodeJson({ error: { code: 'INTERNAL', message: 'Something went wrong on our side' } }),
};

export function renderError(error: unknown, format: ErrorFormat): RenderedError {
  return format.name === 'unified' ? renderUnified(error, format.catchAll) : renderDefault(error);
}

function renderDefault(error: unknown): RenderedError {
  if (error instanceof HttpError) return json(error.status, { detail: error.detail }, error.headers);
  if (error instanceof RequestValidationError) return json(422, { detail: error.items });
  // DomainErrors are deliberately not recognised here, as in the reference: they are the plain 500.
  return PLAIN_500;
}

function renderUnified(error: unknown, catchAll: boolean): RenderedError {
  if (error instanceof HttpError) {
    const body = typeof error.detail === 'string' ? { code: `HTTP_${error.status}`, message: error.detail } : error.detail;
    return json(error.status, { error: body }, error.headers);
  }
  if (error instanceof RequestValidationError) {
    const fields = error.items.map((item) => ({ field: item.loc.join('.'), message: item.msg }));
    return json(422, { error: { code: 'VALIDATION_FAILED', message: 'Some fields are wrong', fields } });
  }
  if (error instanceof DomainError) {
    return json(error.status, { error: { code: error.code, message: error.publicMessage } });
  }
  return catchAll ? UNIFIED_500 : PLAIN_500;
}

function json(status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): RenderedError {
  return { status, headers, contentType: JSON_TYPE, body: encodeJson(body), unexpected: false };
}
