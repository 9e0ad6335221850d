// What the kit knows of 422 bodies: a FastAPI `detail` list of validation items is compared item by
// item, each item paired with the other side's item at the same `loc` (pydantic 1 and 2 may list
// them in another order), and a pair is told apart as "the same error in pydantic 2's words" when
// the primary's item is worded as pydantic 1 words it (FastAPI before 0.100: dotted types such as
// `type_error.integer`, no `input`) and the candidate's type is the one pydantic 2 gave that error.
// The table holds the errors of the types FastAPI services validate most; an error it lacks is
// still compared, only not recognised. docs/migration.md says how to read these differences.

type Item = Record<string, unknown>;

/** Pydantic 1's error types, each with the pydantic 2 types that say the same error. */
const PYDANTIC_2_NAMES: Readonly<Record<string, readonly string[]>> = {
  'value_error.missing': ['missing'],
  'type_error.integer': ['int_parsing', 'int_type', 'int_from_float', 'int_parsing_size'],
  'type_error.float': ['float_parsing', 'float_type'],
  'type_error.bool': ['bool_parsing', 'bool_type'],
  'type_error.str': ['string_type'],
  'type_error.bytes': ['bytes_type'],
  'type_error.dict': ['dict_type', 'model_attributes_type', 'model_type'],
  'type_error.list': ['list_type'],
  'type_error.enum': ['enum'],
  'type_error.uuid': ['uuid_parsing', 'uuid_type'],
  'type_error.decimal': ['decimal_parsing', 'decimal_type'],
  'value_error.jsondecode': ['json_invalid'],
  'value_error.number.not_gt': ['greater_than'],
  'value_error.number.not_ge': ['greater_than_equal'],
  'value_error.number.not_lt': ['less_than'],
  'value_error.number.not_le': ['less_than_equal'],
  'value_error.number.not_multiple': ['multiple_of'],
  'value_error.any_str.min_length': ['string_too_short'],
  'value_error.any_str.max_length': ['string_too_long'],
  'value_error.str.regex': ['string_pattern_mismatch'],
  'value_error.list.min_items': ['too_short'],
  'value_error.list.max_items': ['too_long'],
  'value_error.datetime': ['datetime_parsing', 'datetime_from_date_parsing', 'datetime_type'],
  'value_error.date': ['date_parsing', 'date_from_datetime_parsing', 'date_type'],
  'value_error.extra': ['extra_forbidden'],
  'value_error.const': ['literal_error'],
  'value_error.email': ['value_error'],
};

const isItem = (value: unknown): value is Item =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Array.isArray((value as Item).loc);

/** True when the value is a list of validation items (each an object with a `loc` list). */
export function isItemList(value: unknown): value is Item[] {
  return Array.isArray(value) && value.length > 0 && value.every(isItem);
}

const locKey = (item: Item): string => JSON.stringify(item.loc);

export interface ItemPair {
  /** The index the pair is shown at: the primary's, or the candidate's for an item only it has. */
  readonly index: number;
  readonly primary: Item | undefined;
  readonly candidate: Item | undefined;
}

/** The items of both lists paired by `loc`, in the primary's order, then the candidate's others. */
export function pairItems(primary: readonly Item[], candidate: readonly Item[]): ItemPair[] {
  const unpaired = candidate.map((item, index) => ({ item, index }));
  const pairs: ItemPair[] = primary.map((item, index) => {
    const at = unpaired.findIndex((other) => locKey(other.item) === locKey(item));
    const match = at < 0 ? undefined : unpaired.splice(at, 1)[0];
    return { index, primary: item, candidate: match?.item };
  });
  for (const { item, index } of unpaired)
    pairs.push({ index, primary: undefined, candidate: item });
  return pairs;
}

/** Whether an item is worded as pydantic 1 words it: a dotted type and no `input`. */
const isPydantic1 = (item: Item): boolean =>
  typeof item.type === 'string' && item.type.includes('.') && !('input' in item);

/**
 * The note on the differences of one pair: "pydantic 2 wording" when the candidate says the
 * primary's pydantic 1 error in pydantic 2's words; undefined otherwise.
 */
export function pydanticWording(pair: ItemPair): string | undefined {
  const { primary, candidate } = pair;
  if (primary === undefined || candidate === undefined || !isPydantic1(primary)) return undefined;
  const names = PYDANTIC_2_NAMES[String(primary.type)];
  if (names === undefined || typeof candidate.type !== 'string') return undefined;
  return names.includes(candidate.type) ? `${String(primary.type)} → ${candidate.type}` : undefined;
}
