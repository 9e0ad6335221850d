// Schemas declared once: each checks input with the reference's (pydantic's) rules and error items,
// and describes itself as JSON Schema for the OpenAPI document.
import type { ValidationItem } from '../errors.js';
import { JsonObject, type JsonValue } from '../json/json-value.js';
import { boolFromJson, constraintMessage, LAX_BOOL_WORDS, MESSAGES, readIntText } from './lax.js';

export type Loc = readonly (string | number)[];
export type Issues = ValidationItem[];
export type JsonSchema = Readonly<Record<string, unknown>>;

/** The largest integer JavaScript holds exactly (deviation D2 bounds integer inputs by it). */
export const SAFE_INT_MAX = Number.MAX_SAFE_INTEGER;

// ---------------------------------------------------------------- path parameters

export interface ParamSpec<T> {
  readonly jsonSchema: JsonSchema;
  /** Reads the percent-decoded path text; on failure records an issue and returns undefined. */
  fromText(text: string, loc: Loc, issues: Issues): T | undefined;
}

export interface IntBounds {
  readonly title: string;
  readonly gt?: number;
  readonly ge?: number;
  readonly le?: number;
}

/** An integer read from text as pydantic reads it (lax), then checked against its bounds. */
export function intParam(bounds: IntBounds): ParamSpec<number> {
  for (const bound of [bounds.gt, bounds.ge, bounds.le]) {
    if (bound !== undefined && !Number.isSafeInteger(bound))
      throw new Error(`bound ${bound} is not a safe integer`);
  }
  // Without an upper and a lower bound a value could leave the safe range and lose digits as a
  // number.
  if (bounds.le === undefined || (bounds.ge === undefined && bounds.gt === undefined)) {
    throw new Error('intParam needs an upper and a lower bound inside the safe integer range');
  }
  const jsonSchema: Record<string, unknown> = { type: 'integer' };
  if (bounds.le !== undefined) jsonSchema.maximum = bounds.le;
  if (bounds.gt !== undefined) jsonSchema.exclusiveMinimum = bounds.gt;
  if (bounds.ge !== undefined) jsonSchema.minimum = bounds.ge;
  jsonSchema.title = bounds.title;

  type Check = {
    kind: 'less_than_equal' | 'greater_than_equal' | 'greater_than';
    ctxKey: string;
    limit: number;
  };
  // pydantic checks le, then ge, then gt, and reports the first that fails.
  const checks: Check[] = [];
  if (bounds.le !== undefined)
    checks.push({ kind: 'less_than_equal', ctxKey: 'le', limit: bounds.le });
  if (bounds.ge !== undefined)
    checks.push({ kind: 'greater_than_equal', ctxKey: 'ge', limit: bounds.ge });
  if (bounds.gt !== undefined)
    checks.push({ kind: 'greater_than', ctxKey: 'gt', limit: bounds.gt });
  const fails = (check: Check, value: number | bigint): boolean =>
    check.kind === 'less_than_equal'
      ? value > check.limit
      : check.kind === 'greater_than_equal'
        ? value < check.limit
        : value <= check.limit;

  return {
    jsonSchema,
    fromText(text, loc, issues) {
      const value = readIntText(text);
      if (typeof value === 'string') {
        issues.push({ type: value, loc, msg: MESSAGES[value], input: text });
        return undefined;
      }
      for (const check of checks) {
        if (fails(check, value)) {
          issues.push({
            type: check.kind,
            loc,
            msg: constraintMessage(check.kind, check.limit),
            input: text,
            ctx: { [check.ctxKey]: check.limit },
          });
          return undefined;
        }
      }
      return Number(value);
    },
  };
}

/** A string path parameter: any non-empty segment is valid. */
export function strParam(title: string): ParamSpec<string> {
  return { jsonSchema: { type: 'string', title }, fromText: (text) => text };
}

// ---------------------------------------------------------------- body models

export interface FieldSpec<T> {
  readonly jsonSchema: JsonSchema;
  /** A field with a default may be absent; one without is required. */
  readonly default?: T;
  fromJson(value: JsonValue, loc: Loc, issues: Issues): T | undefined;
}

/** A string field: pydantic's lax mode still takes no number, boolean or null for a string. */
export function strField(title: string): FieldSpec<string> {
  return {
    jsonSchema: { type: 'string', title },
    fromJson(value, loc, issues) {
      if (typeof value === 'string') return value;
      issues.push({ type: 'string_type', loc, msg: MESSAGES.string_type, input: value });
      return undefined;
    },
  };
}

/** What a lax boolean takes beside true and false, said in its schema (a client sees `type: boolean` only). */
const words = (list: readonly string[]): string => list.map((word) => `"${word}"`).join(', ');
export const LAX_BOOL_DESCRIPTION =
  "Also accepted, as pydantic's lax mode reads a boolean: the numbers 1 and 0 (1.0 and 0.0 too), and the strings " +
  `${words(LAX_BOOL_WORDS.true)} for true and ${words(LAX_BOOL_WORDS.false)} for false, letters in any case. ` +
  'Anything else is refused with 422.';

/** A boolean field with pydantic's lax words and numbers. */
export function boolField(title: string, defaultValue: boolean): FieldSpec<boolean> {
  return {
    jsonSchema: {
      type: 'boolean',
      title,
      default: defaultValue,
      description: LAX_BOOL_DESCRIPTION,
    },
    default: defaultValue,
    fromJson(value, loc, issues) {
      const outcome = boolFromJson(value);
      if (outcome.ok) return outcome.value;
      issues.push({ type: outcome.type, loc, msg: MESSAGES[outcome.type], input: value });
      return undefined;
    },
  };
}

type Fields = Readonly<Record<string, FieldSpec<unknown>>>;
export type ModelOf<F extends Fields> = {
  -readonly [K in keyof F]: F[K] extends FieldSpec<infer T> ? T : never;
};

export interface ModelSpec<T> {
  readonly name: string;
  readonly jsonSchema: JsonSchema;
  /** Validates a decoded body (undefined or null: absent) the way FastAPI validates a single body model. */
  fromBody(body: JsonValue | undefined, loc: Loc, issues: Issues): T | undefined;
  /** A body that is not JSON (another media type): pydantic sees the raw text. */
  fromRawText(text: string, loc: Loc, issues: Issues): undefined;
}

export function model<F extends Fields>(name: string, fields: F): ModelSpec<ModelOf<F>> {
  const entries = Object.entries(fields);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [key, field] of entries) {
    properties[key] = field.jsonSchema;
    if (!('default' in field)) required.push(key);
  }
  const jsonSchema = { properties, type: 'object', required, title: name };

  return {
    name,
    jsonSchema,
    fromBody(body, loc, issues) {
      if (body === undefined || body === null) {
        issues.push({ type: 'missing', loc, msg: MESSAGES.missing, input: null });
        return undefined;
      }
      if (!(body instanceof JsonObject)) {
        issues.push({
          type: 'model_attributes_type',
          loc,
          msg: MESSAGES.model_attributes_type,
          input: body,
        });
        return undefined;
      }
      return readFields(entries, body, loc, issues) as ModelOf<F> | undefined;
    },
    fromRawText(text, loc, issues) {
      issues.push({
        type: 'model_attributes_type',
        loc,
        msg: MESSAGES.model_attributes_type,
        input: text,
      });
      return undefined;
    },
  };
}

function readFields(
  entries: readonly [string, FieldSpec<unknown>][],
  body: JsonObject,
  loc: Loc,
  issues: Issues,
): Record<string, unknown> | undefined {
  const before = issues.length;
  const out: Record<string, unknown> = {};
  for (const [key, field] of entries) {
    const raw = body.get(key);
    if (raw === undefined) {
      if ('default' in field) out[key] = field.default;
      else issues.push({ type: 'missing', loc: [...loc, key], msg: MESSAGES.missing, input: body });
      continue;
    }
    out[key] = field.fromJson(raw, [...loc, key], issues);
  }
  return issues.length === before ? out : undefined;
}
