// The error bodies of each format as JSON Schemas, for the OpenAPI document. The codes, problem
// types and statuses they allow are those of the responses the document shows (openapi.ts renders
// each one), in the catalogue's order, so a document cannot name a code its service does not
// answer, nor miss one it does.
import { catalogueEntries, ERROR_CATALOGUE, problemType, type ErrorCode } from '../catalogue.js';
import type { ErrorFormatName } from '../render.js';
import type { JsonSchema } from '../validation/schema.js';

/** The component names of a format's error bodies. */
export interface FormatSchemaNames {
  /** The 422 body, an error with a text, an error with a code of our own. */
  readonly validation: string;
  readonly error: string;
  readonly codedError: string;
  /**
   * Every one of them, the most specific first: the order in which a row that has several lists
   * them (`anyOf`). A generated client (openapi-python-client) reads a body as the first
   * alternative whose required members it has, so a schema that requires more comes before one that
   * requires less: the default format's `{"detail": {code, message}}` before `{"detail": text}`,
   * and both before its 422 body, which requires nothing; a validation problem (or unified
   * validation error) before the plain one, which it also fits.
   */
  readonly mostSpecificFirst: readonly string[];
}

export const FORMAT_SCHEMA_NAMES: Readonly<Record<ErrorFormatName, FormatSchemaNames>> = {
  default: {
    validation: 'HTTPValidationError',
    error: 'Message',
    codedError: 'CodedMessage',
    mostSpecificFirst: ['CodedMessage', 'Message', 'HTTPValidationError'],
  },
  unified: {
    validation: 'UnifiedValidationError',
    error: 'UnifiedError',
    codedError: 'UnifiedError',
    mostSpecificFirst: ['UnifiedValidationError', 'UnifiedError'],
  },
  problem: {
    validation: 'ValidationProblem',
    error: 'Problem',
    codedError: 'Problem',
    mostSpecificFirst: ['ValidationProblem', 'Problem'],
  },
};

export const schemaRef = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/** The catalogue's codes among `codes`, in the catalogue's order. */
const inCatalogueOrder = (
  codes: ReadonlySet<ErrorCode>,
  pick: (code: ErrorCode) => boolean = () => true,
): ErrorCode[] =>
  catalogueEntries()
    .map(([code]) => code)
    .filter((code) => codes.has(code) && pick(code));

const codeSchema = (allowed: readonly ErrorCode[], explained: string): JsonSchema => ({
  type: 'string',
  enum: allowed,
  title: 'Code',
  description: `A wire code of the error catalogue (${explained}; docs/errors.md in the repository lists them all); it never changes once published.`,
});

const codeAndMessage = (code: JsonSchema): JsonSchema => ({
  properties: { code, message: { type: 'string', title: 'Message' } },
  type: 'object',
  required: ['code', 'message'],
  title: 'Error',
});

/**
 * pydantic's `ctx` of an item: the limit a bound check names (gt, ge, lt, le: integers, as the
 * bounds of integer inputs are) or, for a JSON syntax error, the decoder's `error`.
 */
const VALIDATION_CONTEXT: JsonSchema = {
  properties: {
    gt: { type: 'integer', title: 'Greater Than' },
    ge: { type: 'integer', title: 'Greater Than Or Equal' },
    lt: { type: 'integer', title: 'Less Than' },
    le: { type: 'integer', title: 'Less Than Or Equal' },
    error: { type: 'string', title: 'Error' },
  },
  type: 'object',
  additionalProperties: false,
  title: 'Context',
};

function defaultSchemas(codes: ReadonlySet<ErrorCode>): Record<string, JsonSchema> {
  const coded = inCatalogueOrder(codes, (code) => ERROR_CATALOGUE[code].inDefault === 'coded');
  return {
    CodedMessage: {
      properties: {
        detail: codeAndMessage(
          codeSchema(coded, "those of our own are listed in this document's description"),
        ),
      },
      type: 'object',
      required: ['detail'],
      title: 'CodedMessage',
    },
    HTTPValidationError: {
      properties: {
        detail: { items: schemaRef('ValidationError'), type: 'array', title: 'Detail' },
      },
      type: 'object',
      title: 'HTTPValidationError',
    },
    Message: {
      properties: { detail: { type: 'string', title: 'Detail' } },
      type: 'object',
      required: ['detail'],
      title: 'Message',
    },
    ValidationError: {
      properties: {
        loc: {
          items: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
          type: 'array',
          title: 'Location',
        },
        msg: { type: 'string', title: 'Message' },
        type: { type: 'string', title: 'Error Type' },
        input: { title: 'Input' },
        ctx: VALIDATION_CONTEXT,
      },
      type: 'object',
      required: ['loc', 'msg', 'type'],
      title: 'ValidationError',
    },
  };
}

function unifiedSchemas(codes: ReadonlySet<ErrorCode>): Record<string, JsonSchema> {
  const allowed = inCatalogueOrder(codes, (code) => code !== 'VALIDATION_FAILED');
  return {
    UnifiedError: {
      properties: {
        error: codeAndMessage(
          codeSchema(
            allowed,
            "HTTP_<status>, or one of our own listed in this document's description",
          ),
        ),
      },
      type: 'object',
      required: ['error'],
      title: 'UnifiedError',
    },
    UnifiedValidationError: {
      properties: {
        error: {
          properties: {
            code: { type: 'string', const: 'VALIDATION_FAILED' satisfies ErrorCode, title: 'Code' },
            message: { type: 'string', title: 'Message' },
            fields: {
              items: {
                properties: {
                  field: { type: 'string', title: 'Field' },
                  message: { type: 'string', title: 'Message' },
                },
                type: 'object',
                required: ['field', 'message'],
              },
              type: 'array',
              title: 'Fields',
            },
          },
          type: 'object',
          required: ['code', 'message', 'fields'],
        },
      },
      type: 'object',
      required: ['error'],
      title: 'UnifiedValidationError',
    },
  };
}

function problemSchemas(codes: ReadonlySet<ErrorCode>): Record<string, JsonSchema> {
  const allowed = inCatalogueOrder(codes);
  /** RFC 9457's members, and our wire code as the extension member `code`. */
  const properties: Record<string, JsonSchema> = {
    type: {
      type: 'string',
      format: 'uri-reference',
      enum: [...new Set(allowed.map(problemType))],
      title: 'Type',
      description:
        'about:blank, or the URI of one of our own problem types, relative to the service (explained at /docs/problems).',
    },
    title: { type: 'string', title: 'Title' },
    status: {
      type: 'integer',
      enum: [...new Set(allowed.map((code) => ERROR_CATALOGUE[code].status))],
      title: 'Status',
    },
    detail: { type: 'string', title: 'Detail' },
    code: codeSchema(allowed, 'explained at /docs/problems'),
  };
  const required = ['type', 'title', 'status', 'detail', 'code'];
  return {
    Problem: { properties, type: 'object', required, title: 'Problem' },
    ValidationProblem: {
      properties: {
        ...properties,
        errors: {
          items: {
            properties: {
              detail: { type: 'string', title: 'Detail' },
              pointer: {
                type: 'string',
                title: 'Pointer',
                description: 'Where in the body: a JSON Pointer, as a URI fragment',
              },
              parameter: {
                type: 'string',
                title: 'Parameter',
                description: 'Which path parameter, by name',
              },
              type: {
                type: 'string',
                title: 'Error Type',
                description: "pydantic's type of the failure",
              },
            },
            type: 'object',
            required: ['detail', 'type'],
          },
          type: 'array',
          title: 'Errors',
        },
      },
      type: 'object',
      required: [...required, 'errors'],
      title: 'ValidationProblem',
    },
  };
}

/**
 * The error schemas of a format, allowing exactly `codes`: the codes the document's responses carry
 * (a service's document names no code, problem type or status that service never answers).
 */
export function errorSchemas(
  format: ErrorFormatName,
  codes: ReadonlySet<ErrorCode>,
): Readonly<Record<string, JsonSchema>> {
  switch (format) {
    case 'default':
      return defaultSchemas(codes);
    case 'unified':
      return unifiedSchemas(codes);
    case 'problem':
      return problemSchemas(codes);
  }
}
