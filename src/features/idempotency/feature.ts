// Safe retries as a feature (feature.ts): always on, since a request without an Idempotency-Key
// is answered as the reference answers it; its options make keys required for the creating
// writes, and set how long a recorded outcome replays (gate.ts says what the gate decides).
import { ConfigError } from '../../options.js';
import type { Feature } from '../feature.js';
import { DEFAULT_IDEMPOTENCY_TTL_MS, IdempotencyGate, type IdempotencyPolicy } from './gate.js';
import { idempotencyStage } from './stage.js';

const HOUR_MS = 60 * 60 * 1000;
/** A year: keys kept longer would only grow the table. */
const TTL_HOURS_MAX = 24 * 366;

export const idempotency: Feature<IdempotencyPolicy> = {
  name: 'idempotency',
  options: [
    {
      name: 'require-idempotency-key',
      variable: 'SVC_REQUIRE_IDEMPOTENCY_KEY',
      takes: 'switch',
      usage: `--require-idempotency-key
                       POST /todos and POST /withdraw/... refuse a request without an
                       Idempotency-Key header (SVC_REQUIRE_IDEMPOTENCY_KEY=1)`,
    },
    {
      name: 'idempotency-ttl',
      variable: 'SVC_IDEMPOTENCY_TTL',
      takes: 'value',
      usage: `--idempotency-ttl H  hours an Idempotency-Key replays its answer before it is pruned
                       (SVC_IDEMPOTENCY_TTL, default 24)`,
    },
  ],
  configure(values) {
    const ttl = values.text('idempotency-ttl');
    return {
      required: values.on('require-idempotency-key'),
      ttlMs: ttl === undefined ? DEFAULT_IDEMPOTENCY_TTL_MS : parseTtl(ttl),
      // Under rate limits, the outcomes of keyed writes are kept for their retries, so that a
      // retry over its client's limit is still answered (gate.ts).
      keepRan: values.text('rate-limit') !== undefined,
    };
  },
  join(policy) {
    const gate = new IdempotencyGate(policy);
    return {
      store: { idempotencyTtlMs: policy.ttlMs },
      stages: () => [idempotencyStage(gate, policy)],
    };
  },
};

/** Hours, a decimal number (0.5 is half an hour), more than 0. */
function parseTtl(text: string): number {
  const hours = /^\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
  if (!(hours > 0 && hours <= TTL_HOURS_MAX)) {
    throw new ConfigError(
      `--idempotency-ttl must be a number of hours above 0 and at most ${TTL_HOURS_MAX}, not "${text}"`,
    );
  }
  return Math.round(hours * HOUR_MS);
}
