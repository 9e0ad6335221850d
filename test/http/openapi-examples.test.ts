// Every row of every documented operation shows examples that are answers of that row, in every
// mode the services run in (each service in each error format, and with keys required where that
// changes the document: the published modes). Swagger UI and ReDoc show a row's example as what the
// row answers, so an example under the wrong row teaches a reader the wrong status.
//
// Checked on each mode's /openapi.json, served by a real server:
// - every row but a 204 and a 304 (the 3XX range) has content, and every media type of it at least
//   one example;
// - every example validates against its row's schema (Ajv, JSON Schema 2020-12);
// - an error example stands for a status, read from its body as a client reads it (a problem's
//   `status`, the catalogue's status of a unified code: HTTP_<status> or one of our own), or, where
//   the body carries none (the default format's string detail, the plain 500), from its name, which
//   must then be a code the format shows in that shape; the row a client reads that status under
//   (its code, else its range, else default) is the row the example is shown in;
// - a row with several schemas lists them so that a client taking the first alternative whose
//   required members an answer has (a generated Python client does) reads each example as one it
//   fits;
// - the codes the error schemas allow are those the examples carry, and a service's document names
//   no code of the other service's own.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ERROR_CATALOGUE, type ErrorCode } from '../../src/http/catalogue.js';
import { get, json } from '../support/http.js';
import {
  allowedCodes,
  OpenApiChecker,
  type MediaTypeObject,
  type ResponseObject,
} from '../support/openapi-check.js';
import { MODES } from '../support/published.js';
import { withServer } from '../support/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

type JsonRecord = Readonly<Record<string, unknown>>;

const isRecord = (value: unknown): value is JsonRecord =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isCode = (name: string): name is ErrorCode => Object.hasOwn(ERROR_CATALOGUE, name);

/** The row a client reads an answer with this status under, by OpenAPI's rule: its code, else its range, else default. */
function rowFor(responses: Readonly<Record<string, unknown>>, status: number): string | undefined {
  return [String(status), `${String(status).charAt(0)}XX`, 'default'].find(
    (key) => responses[key] !== undefined,
  );
}

/** A media type's examples as [name, value] pairs (a lone `example` is named "example"). */
function examplesOf(media: MediaTypeObject): [string, unknown][] {
  const named = Object.entries(media.examples ?? {}).map(([name, example]): [string, unknown] => [
    name,
    example.value,
  ]);
  return media.example === undefined ? named : [...named, ['example', media.example]];
}

/**
 * The status an error example stands for, or what is wrong with it. The body says it where it can
 * (a problem's `status`; a unified or coded detail's code, by the catalogue), and then the
 * example's name must be that code; where the body cannot, the name must be a code the format shows
 * that way.
 */
function statusOf(mediaType: string, name: string, value: unknown): number | string {
  const byCode = (code: unknown, shape: ReadonlyArray<string>): number | string => {
    if (typeof code !== 'string' || !isCode(code))
      return `carries no code of the catalogue (${String(code)})`;
    if (code !== name) return `is named ${name} but carries the code ${code}`;
    if (!shape.includes(ERROR_CATALOGUE[code].inDefault))
      return `shows ${code} in a shape its catalogue entry does not give it (${ERROR_CATALOGUE[code].inDefault})`;
    return ERROR_CATALOGUE[code].status;
  };
  const any = ['detail', 'coded', 'validation', 'unhandled'];
  if (mediaType === 'text/plain') {
    // The plain 500 of an unhandled failure, whatever the error was (insufficient funds, in the
    // default format).
    if (value !== 'Internal Server Error') return `is not the plain 500: ${String(value)}`;
    const status = byCode(name, ['unhandled']);
    return typeof status === 'number' ? 500 : status;
  }
  if (!isRecord(value)) return 'is not a JSON object';
  if (mediaType === 'application/problem+json') {
    const status = byCode(value.code, any);
    return typeof status === 'number' && status !== value.status
      ? `carries status ${String(value.status)}, its code ${String(value.code)} is ${status}`
      : status;
  }
  if (isRecord(value.error)) return byCode(value.error.code, any);
  const detail = value.detail;
  if (Array.isArray(detail)) return byCode(name, ['validation']);
  if (isRecord(detail)) return byCode(detail.code, ['coded']);
  if (typeof detail === 'string') return byCode(name, ['detail']);
  return 'has neither `error` nor `detail`';
}

/** Whether a value has every member a schema requires, at every level an object schema names: what a generated client's from_dict checks. */
function hasRequired(checker: OpenApiChecker, schema: unknown, value: unknown): boolean {
  const resolved = checker.resolve(schema);
  if (resolved.type !== 'object') return true;
  if (!isRecord(value)) return false;
  const required = (resolved.required ?? []) as readonly string[];
  if (!required.every((member) => Object.hasOwn(value, member))) return false;
  const properties = (resolved.properties ?? {}) as JsonRecord;
  return Object.entries(properties).every(
    ([member, sub]) => !Object.hasOwn(value, member) || hasRequired(checker, sub, value[member]),
  );
}

/** What is wrong with the examples of one media type of one row; each example found is counted. */
function checkMediaType(
  checker: OpenApiChecker,
  where: string,
  responses: Readonly<Record<string, ResponseObject>>,
  row: string,
  mediaType: string,
  media: MediaTypeObject,
  seen: Set<string>,
): string[] {
  const found: string[] = [];
  const examples = examplesOf(media);
  if (examples.length === 0) found.push(`${where}: no example`);
  const success = row.startsWith('2');
  const alternatives = (media.schema as { anyOf?: readonly unknown[] }).anyOf;
  for (const [name, value] of examples) {
    const at = `${where} example ${name}`;
    const wrong = checker.schemaErrors(media.schema, value);
    if (wrong !== undefined)
      found.push(`${at} does not validate against its row's schema: ${wrong}`);
    if (alternatives !== undefined) {
      const readAs = alternatives.find((alternative) => hasRequired(checker, alternative, value));
      if (readAs === undefined || checker.schemaErrors(readAs, value) !== undefined) {
        found.push(
          `${at}: a client trying the alternatives in order reads it as ${JSON.stringify(readAs)}, which it does not fit`,
        );
      }
    }
    if (success) continue;
    if (mediaType !== 'text/plain') seen.add(name);
    const status = statusOf(mediaType, name, value);
    if (typeof status === 'string') found.push(`${at} ${status}`);
    else if (rowFor(responses, status) !== row)
      found.push(
        `${at} stands for status ${status}, which a client reads under ${rowFor(responses, status)}, not ${row}`,
      );
  }
  return found;
}

/** Own codes only one service answers: its document names them, the other's never does. */
const ONLY = {
  todo: ['HTTP_400', 'HTTP_409', 'HTTP_413'],
  bank: ['HTTP_401', 'NOT_ENOUGH_MONEY', 'LIMITS_HIDDEN'],
} as const;

describe(
  'every example of a documented row is an answer of that row, in every mode',
  { timeout: SUITE_TIMEOUT_MS },
  () => {
    for (const mode of MODES) {
      test(mode.name, () =>
        withServer(mode.server, async (url) => {
          const served = await get(url, '/openapi.json');
          const text = served.text;
          const checker = new OpenApiChecker(json(served));
          const found: string[] = [];
          const seen = new Set<string>();
          let examples = 0;
          for (const [path, operations] of Object.entries(checker.document.paths)) {
            for (const [method, operation] of Object.entries(operations)) {
              for (const [row, response] of Object.entries(operation.responses)) {
                const where = `${method.toUpperCase()} ${path} ${row}`;
                if (response.content === undefined) {
                  if (row !== '204' && row !== '3XX')
                    found.push(`${where}: no content, and neither a 204 nor a 304 (3XX)`);
                  continue;
                }
                for (const [mediaType, media] of Object.entries(response.content)) {
                  examples += examplesOf(media).length;
                  found.push(
                    ...checkMediaType(
                      checker,
                      `${where} ${mediaType}`,
                      operation.responses,
                      row,
                      mediaType,
                      media,
                      seen,
                    ),
                  );
                }
              }
            }
          }
          assert.deepEqual(found, []);
          // The walk must have met the rows, or it proves nothing.
          assert.ok(examples >= 15, `only ${examples} examples`);
          const unshown = [...allowedCodes(checker.document)].filter((code) => !seen.has(code));
          assert.deepEqual(unshown, [], 'codes a schema allows that no example carries');
          const other = mode.server.service === 'todo' ? ONLY.bank : ONLY.todo;
          const kebab = (code: string): string => code.toLowerCase().replaceAll('_', '-');
          for (const code of other)
            assert.ok(
              !text.includes(code) && !text.includes(kebab(code)),
              `the ${mode.server.service} document names ${code}`,
            );
        }),
      );
    }
  },
);
