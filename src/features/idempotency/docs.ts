// How an idempotent operation is documented: the Idempotency-Key header parameter, the
// Idempotent-Replayed header of a replay, and the range its other responses are read under. The
// contract fixes each operation's three-digit codes (the to-do table, and D10 for the bank), so the
// key's 400 and 409 are described by a `4XX` range, and its 422 joins the validation 422 as another
// body it may have (openapi.ts places each response).
import type { HeaderDoc, RequestHeaderDoc, RowDoc } from '../../http/stages/stage.js';
import { REPLAYED_HEADER } from './gate.js';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_KEY_LENGTH_MAX,
  IDEMPOTENCY_KEY_PATTERN,
} from './key.js';

export function idempotencyKeyParameter(required: boolean, ttlMs: number): RequestHeaderDoc {
  const hours = ttlMs / 3_600_000;
  return {
    name: IDEMPOTENCY_KEY_HEADER,
    required,
    description:
      `Makes a retry safe: the first request with a key runs and its outcome is recorded with its write; the same request ` +
      `with the same key gets the answer to that outcome again (Idempotent-Replayed: true) and runs nothing. A structured-field string ` +
      `("8e03978e-40d5-43e8-bc93-6894a57f9324") or the bare key, 1 to ${IDEMPOTENCY_KEY_LENGTH_MAX} printable ASCII characters but the comma; ` +
      `kept ${hours === 1 ? '1 hour' : `${Number(hours.toFixed(3))} hours`} (see docs/retrying.md in the repository).` +
      (required ? ' Required: a request without one is refused (400).' : ''),
    schema: { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN },
  };
}

export const REPLAYED_HEADER_DOCS: Readonly<Record<string, HeaderDoc>> = {
  [REPLAYED_HEADER]: {
    description:
      'Present (true) when this answer is the recorded answer of an earlier request with the same Idempotency-Key.',
    schema: { const: 'true' },
  },
};

/** The 4XX range: what the key adds beside the operation's listed codes, and any other 4xx the operation answers. */
export const KEY_ANSWERS_ROW: RowDoc = {
  key: '4XX',
  description:
    'Client errors beside the listed codes, each shown as an example. The Idempotency-Key adds 400 for a key that is not 1 to 255 ' +
    'printable ASCII characters but the comma (or a missing one, when keys are required) and 409 (with Retry-After) while a request ' +
    'with the same key is still running; where a listed code is the same status, its row shows the answer instead. A recorded ' +
    'outcome replays with its own status, whatever it is.',
};
