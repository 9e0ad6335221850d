// The error bodies of each format as JSON Schemas, for the OpenAPI document. The codes, problem
// types and statuses they allow come from the error catalogue, so the documents cannot name a code
// the services do not answer, nor miss one they do.
import { catalogueEntries, ERROR_CATALOGUE, problemType, type ErrorCode } from './catalogue.js';
import { JSON_TYPE, PROBLEM_JSON_TYPE, type ErrorFormatName } from './render.js';
import type { JsonSchema } from './schema.js';

export interface FormatSchemas {
  /** The media type of its JSON error bodies. */
  readonly mediaType: string;
  /** Component names: the 422 body, an error with a text, an error with a code of our own. */
  readonly validation: string;
  readonly error: string;
  readonly codedError: string;
  readonly schemas: Readonly<Record<string, JsonSchema>>;
}

export const schemaRef = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

const entries = catalogueEntries();
const codes = (pick: (code: ErrorCode) => boolean): ErrorCode[] => entries.map(([code]) => code).filter(pick);
const ALL_CODES = codes(() => true);
const OWN_CODES = codes((code) => ERROR_CATALOGUE[code].own && code !== 'VALIDATION_FAILED');
const codeSchema = (allowed: readonly ErrorCode[]): JsonSchema => ({
  type: 'string',
  enum: allowed,
  title: 'Code',
  description: 'A wire code of the error catalogue (see /docs/problems, and docs/errors.md in the repository); it never changes once published.',
});

const codeAndMessage = (allowed: readonly ErrorCode[]): JsonSchema => ({
  properties: { code: codeSchema(allowed), message: { type: 'string', title: 'Message' } },
  type: 'object',
  required: ['code', 'message'],
  title: 'Error',
});

/** RFC 9457's members, and our wire code as the extension member `code`. */
const PROBLEM_PROPERTIES: Readonly<Record<string, JsonSchema>> = {
  type: {
    type: 'string',
    format: 'uri-reference',
    enum: [...new Set(ALL_CODES.map(problemType))],
    title: 'Type',
    description: 'about:blank, or the URI of one of our own problem types, relative to the service (explained at /docs/problems).',
  },
  title: { type: 'string', title: 'Title' },
  status: { type: 'integer', enum: [...new Set(entries.map(([, entry]) => entry.status))], title: 'Status' },
  detail: { type: 'string', title: 'Detail' },
  code: codeSchema(ALL_CODES),
};
const PROBLEM_REQUIRED = ['type', 'title', 'status', 'detail', 'code'];

const DEFAULT_SCHEMAS: FormatSchemas = {
  mediaType: JSON_TYPE,
  validation: 'HTTPValidationError',
  error: 'Message',
  codedError: 'CodedMessage',
  schemas: {
    CodedMessage: { properties: { detail: codeAndMessage(OWN_CODES) }, type: 'object', required: ['detail'], title: 'CodedMessage' },
    HTTPValidationError: {
      properties: { detail: { items: schemaRef('ValidationError'), type: 'array', title: 'Detail' } },
      type: 'object',
      title: 'HTTPValidationError',
    },
    Message: { properties: { detail: { type: 'string', title: 'Detail' } }, type: 'object', required: ['detail'], title: 'Message' },
    ValidationError: {
      properties: {
        loc: { items: { anyOf: [{ type: 'string' }, { type: 'integer' }] }, type: 'array', title: 'Location' },
        msg: { type: 'string', title: 'Message' },
        type: { type: 'string', title: 'Error Type' },
        input: { title: 'Input' },
        ctx: { type: 'object', title: 'Context' },
      },
      type: 'object',
      required: ['loc', 'msg', 'type'],
      title: 'ValidationError',
    },
  },
};

const UNIFIED_SCHEMAS: FormatSchemas = {
  mediaType: JSON_TYPE,
  validation: 'UnifiedValidationError',
  error: 'UnifiedError',
  codedError: 'UnifiedError',
  schemas: {
    UnifiedError: {
      properties: { error: codeAndMessage(ALL_CODES.filter((code) => code !== 'VALIDATION_FAILED')) },
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
                properties: { field: { type: 'string', title: 'Field' }, message: { type: 'string', title: 'Message' } },
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
  },
};

const PROBLEM_SCHEMAS: FormatSchemas = {
  mediaType: PROBLEM_JSON_TYPE,
  validation: 'ValidationProblem',
  error: 'Problem',
  codedError: 'Problem',
  schemas: {
    Problem: { properties: PROBLEM_PROPERTIES, type: 'object', required: PROBLEM_REQUIRED, title: 'Problem' },
    ValidationProblem: {
      properties: {
        ...PROBLEM_PROPERTIES,
        errors: {
          items: {
            properties: {
              detail: { type: 'string', title: 'Detail' },
              pointer: { type: 'string', title: 'Pointer', description: 'Where in the body: a JSON Pointer, as a URI fragment' },
              parameter: { type: 'string', title: 'Parameter', description: 'Which path parameter, by name' },
              type: { type: 'string', title: 'Error Type', description: "pydantic's type of the failure" },
            },
            type: 'object',
            required: ['detail', 'type'],
          },
          type: 'array',
          title: 'Errors',
        },
      },
      type: 'object',
      required: [...PROBLEM_REQUIRED, 'errors'],
      title: 'ValidationProblem',
    },
  },
};

export const ERROR_SCHEMAS: Readonly<Record<ErrorFormatName, FormatSchemas>> = {
  default: DEFAULT_SCHEMAS,
  unified: UNIFIED_SCHEMAS,
  problem: PROBLEM_SCHEMAS,
};
