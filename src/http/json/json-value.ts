// The JSON data model of the reference framework (Python's json module + pydantic).
// Python keeps integers exact and tells 1 from 1.0, and a dict keeps its insertion order;
// echoing a rejected input back to the client ("input" of a validation item) must do the same.

/** A JSON number written with a fraction or an exponent: a Python float. */
export class PyFloat {
  constructor(readonly value: number) {}
}

/**
 * An object of JSON, as Python's dict holds it: keys in first-insertion order, a repeated key keeps
 * its place and takes the last value. Read-only (it is client input), built by the decoder.
 *
 * Not a Map: V8 allocates a Map at about three times the cost of a plain object, and a body of many
 * small objects spent most of its decoding on them. The members sit in one array, key then value;
 * a lookup scans it, which suits how decoded objects are read (a schema asks for its few fields).
 */
export class JsonObject implements ReadonlyMap<string, JsonValue> {
  /** Key 0, value 0, key 1, value 1, …; no key twice. */
  readonly members: readonly JsonValue[];

  constructor(members: readonly JsonValue[]) {
    this.members = members;
  }

  /** An object from entries, a repeated key keeping its first place and taking its last value. */
  static fromEntries(entries: Iterable<readonly [string, JsonValue]>): JsonObject {
    const members: JsonValue[] = [];
    for (const [key, value] of new Map(entries)) members.push(key, value);
    return new JsonObject(members);
  }

  get size(): number {
    return this.members.length >> 1;
  }

  get(key: string): JsonValue | undefined {
    const members = this.members;
    for (let k = 0; k < members.length; k += 2) {
      if (members[k] === key) return members[k + 1];
    }
    return undefined;
  }

  has(key: string): boolean {
    const members = this.members;
    for (let k = 0; k < members.length; k += 2) {
      if (members[k] === key) return true;
    }
    return false;
  }

  forEach(
    callback: (value: JsonValue, key: string, object: ReadonlyMap<string, JsonValue>) => void,
    thisArg?: unknown,
  ): void {
    const members = this.members;
    for (let k = 0; k < members.length; k += 2)
      callback.call(thisArg, members[k + 1] as JsonValue, members[k] as string, this);
  }

  *entries(): IterableIterator<[string, JsonValue]> {
    const members = this.members;
    for (let k = 0; k < members.length; k += 2)
      yield [members[k] as string, members[k + 1] as JsonValue];
  }

  *keys(): IterableIterator<string> {
    const members = this.members;
    for (let k = 0; k < members.length; k += 2) yield members[k] as string;
  }

  *values(): IterableIterator<JsonValue> {
    const members = this.members;
    for (let k = 1; k < members.length; k += 2) yield members[k] as JsonValue;
  }

  [Symbol.iterator](): IterableIterator<[string, JsonValue]> {
    return this.entries();
  }
}

/**
 * A decoded JSON value. Integers are `number` while safe, `bigint` beyond 2^53-1;
 * floats are `PyFloat`; objects are `JsonObject`s (no prototype, no key reordering).
 */
export type JsonValue =
  null | boolean | string | number | bigint | PyFloat | JsonValue[] | JsonObject;
