// How a rate-limited operation is documented (rate-limit.ts): the 429 with its Retry-After and
// RateLimit fields, and the RateLimit fields of an admitted response.
import type { RateLimits } from '../../rate-limits/policy.js';
import { kindOf } from '../../rate-limits/policy.js';
import {
  RATE_LIMIT_DRAFT,
  RATE_LIMIT_HEADER,
  RATE_LIMIT_POLICY_HEADER,
  rateLimited,
  policyField,
} from './gate.js';

/** The kind an operation of this method counts under, when that kind is limited. */
export function limitedKind(
  method: string,
  limits: RateLimits | undefined,
): 'writes' | 'reads' | undefined {
  const kind = kindOf(method);
  return kind === undefined || limits?.[kind] === undefined ? undefined : kind;
}

export function rateLimitHeaderDocs(
  kind: 'writes' | 'reads',
  limits: RateLimits,
): Record<string, unknown> {
  return {
    [RATE_LIMIT_POLICY_HEADER]: {
      description: `The limit on ${kind} per client (${RATE_LIMIT_DRAFT}): its window w (seconds in which a whole burst comes back) and quota q, the most admitted in any w seconds (the burst, then the rate).`,
      schema: { type: 'string', example: policyField(kind, limits) },
    },
    [RATE_LIMIT_HEADER]: {
      description:
        'What is left of the limit: r requests may be sent at once now; t is the seconds (rounded up) until r next grows, and no more than r are admitted sooner.',
      schema: { type: 'string' },
    },
  };
}

export const RETRY_AFTER_429_DOC: Record<string, unknown> = {
  'Retry-After': {
    description: 'Seconds after which a request of this kind is admitted again.',
    required: true,
    schema: { type: 'string' },
  },
};

export const RATE_LIMITED_DESCRIPTION =
  'Too Many Requests: the client is over its rate limit for this kind of request. Nothing ran; an Idempotency-Key replay is answered whatever the limit.';

/** A representative 429, rendered like any error in the active format. */
export const RATE_LIMITED_EXAMPLE = rateLimited({});
