// Checks an answer against an OpenAPI 3.1 document as a third-party client would read it: the
// operation by method and path template, the response by exact status, then its `NXX` range, then
// `default`; the media type among the response's content; the body against the schema (Ajv, JSON
// Schema 2020-12); the headers the response marks required.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { RawResponse } from './http.js';

// ajv-formats is CommonJS: its default export is the function itself under Node's interop.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export interface MediaTypeObject {
  readonly schema: unknown;
  readonly example?: unknown;
  readonly examples?: Readonly<
    Record<string, { readonly summary?: string; readonly value: unknown }>
  >;
}
export interface ResponseObject {
  readonly description: string;
  readonly content?: Readonly<Record<string, MediaTypeObject>>;
  readonly headers?: Readonly<Record<string, { readonly required?: boolean }>>;
}
export interface Operation {
  readonly responses: Readonly<Record<string, ResponseObject>>;
}
export interface Document {
  readonly paths: Readonly<Record<string, Readonly<Record<string, Operation>>>>;
  readonly components: { readonly schemas: Readonly<Record<string, unknown>> };
}

const SCHEMA_PREFIX = 'urn:components:';

export class OpenApiChecker {
  private readonly ajv: Ajv2020;
  /** The document, its component references rewritten as ids Ajv resolves (SCHEMA_PREFIX + name). */
  readonly document: Document;
  private readonly compiled = new Map<unknown, ValidateFunction>();

  constructor(document: unknown) {
    // Component references become ids Ajv resolves on its own; the document is not a schema itself.
    this.document = JSON.parse(
      JSON.stringify(document).replaceAll('"#/components/schemas/', `"${SCHEMA_PREFIX}`),
    ) as Document;
    this.ajv = addFormats(new Ajv2020({ strict: true, allErrors: true }));
    for (const [name, schema] of Object.entries(this.document.components.schemas)) {
      this.ajv.addSchema(schema as object, SCHEMA_PREFIX + name);
    }
  }

  /** The documented operation a request reaches, or undefined (an undocumented path or method). */
  operation(method: string, target: string): Operation | undefined {
    const path = target.split('?')[0] ?? '';
    const segments = path.split('/');
    for (const [template, operations] of Object.entries(this.document.paths)) {
      const parts = template.split('/');
      const fits =
        parts.length === segments.length &&
        parts.every((part, i) =>
          part.startsWith('{') ? (segments[i] ?? '') !== '' : part === segments[i],
        );
      if (fits) return operations[method.toLowerCase()];
    }
    return undefined;
  }

  /** What is wrong with this answer to the operation, by the document's rules; empty when nothing is. */
  problems(operation: Operation, res: RawResponse): string[] {
    const status = String(res.status);
    const response =
      operation.responses[status] ??
      operation.responses[`${status[0] ?? ''}XX`] ??
      operation.responses.default;
    if (response === undefined) return [`status ${status} is not described`];
    const found: string[] = [];
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      if (header.required === true && res.headers[name.toLowerCase()] === undefined)
        found.push(`header ${name} is missing`);
    }
    if (res.body.length === 0) {
      if (response.content !== undefined && res.status !== 204)
        found.push(`status ${status}: a body is described, none came`);
      return found;
    }
    const mediaType =
      String(res.headers['content-type'] ?? '')
        .split(';')[0]
        ?.trim() ?? '';
    const content = response.content?.[mediaType];
    if (content === undefined)
      return [...found, `status ${status}: media type ${mediaType} is not described`];
    const body: unknown = mediaType.endsWith('json') ? JSON.parse(res.text) : res.text;
    const validate = this.validator(content.schema);
    if (!validate(body))
      found.push(
        `status ${status}: body ${res.text.slice(0, 200)} fails: ${this.ajv.errorsText(validate.errors)}`,
      );
    return found;
  }

  /** What is wrong with a value by a schema of the document; undefined when nothing is. */
  schemaErrors(schema: unknown, value: unknown): string | undefined {
    const validate = this.validator(schema);
    return validate(value) ? undefined : this.ajv.errorsText(validate.errors);
  }

  /** A schema of the document with its component reference, if it is one, followed. */
  resolve(schema: unknown): Readonly<Record<string, unknown>> {
    const ref = (schema as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && ref.startsWith(SCHEMA_PREFIX))
      return this.resolve(this.document.components.schemas[ref.slice(SCHEMA_PREFIX.length)]);
    return schema as Readonly<Record<string, unknown>>;
  }

  private validator(schema: unknown): ValidateFunction {
    let validate = this.compiled.get(schema);
    if (validate === undefined) {
      validate = this.ajv.compile(schema as object);
      this.compiled.set(schema, validate);
    }
    return validate;
  }
}

/** Every code an error schema of a document allows (the enums and consts its schemas title Code). */
export function allowedCodes(node: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) allowedCodes(item, into);
  else if (typeof node === 'object' && node !== null) {
    const record = node as Readonly<Record<string, unknown>>;
    if (record.title === 'Code' && Array.isArray(record.enum))
      for (const code of record.enum) into.add(String(code));
    if (record.title === 'Code' && typeof record.const === 'string') into.add(record.const);
    for (const value of Object.values(record)) allowedCodes(value, into);
  }
  return into;
}
