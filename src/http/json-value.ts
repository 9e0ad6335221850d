// The JSON data model of the reference framework (Python's json module + pydantic).
// Python keeps integers exact and tells 1 from 1.0, and a dict keeps its insertion order;
// echoing a rejected input back to the client ("input" of a validation item) must do the same.

/** A JSON number written with a fraction or an exponent: a Python float. */
export class PyFloat {
  constructor(readonly value: number) {}
}

/**
 * An object of JSON: keys in first-insertion order, a repeated key keeps its place and takes the last
 * value. Read-only: a decoded body is input, and the decoder may share one value between places.
 */
export type JsonObject = ReadonlyMap<string, JsonValue>;

/**
 * A decoded JSON value. Integers are `number` while safe, `bigint` beyond 2^53-1;
 * floats are `PyFloat`; objects are `Map`s (no prototype, no key reordering).
 */
export type JsonValue = null | boolean | string | number | bigint | PyFloat | JsonValue[] | JsonObject;
