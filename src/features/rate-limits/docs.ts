// How a rate-limited operation is documented (gate.ts): the RateLimit fields every response of a
// limited operation may carry, the 429 row with its Retry-After, and, behind trusted proxies, the
// header the client is read from.
import type { HeaderDoc, RequestHeaderDoc, RowDoc, StageDocs } from '../../http/stages/stage.js';
import { kindOf, type RateLimits } from '../../rate-limits/policy.js';
import type { TrustedProxies } from './client-address.js';
import type { RateLimitSettings } from './feature.js';
import {
  policyField,
  RATE_LIMIT_DRAFT,
  RATE_LIMIT_HEADER,
  RATE_LIMIT_POLICY_HEADER,
  rateLimited,
} from './gate.js';

/** The kind an operation of this method counts under, when that kind is limited. */
export function limitedKind(
  method: string,
  limits: RateLimits | undefined,
): 'writes' | 'reads' | undefined {
  const kind = kindOf(method);
  return kind === undefined || limits?.[kind] === undefined ? undefined : kind;
}

function headerDocs(limits: RateLimits): Record<string, HeaderDoc> {
  const policies = (['reads', 'writes'] as const).flatMap(
    (kind) => policyField(kind, limits) ?? [],
  );
  return {
    [RATE_LIMIT_POLICY_HEADER]: {
      description: `The limit on this kind of request (reads or writes) per client (${RATE_LIMIT_DRAFT}): its window w, the seconds in which a whole burst comes back (burst ÷ rate, rounded up), and its quota q, the most admitted in any w seconds: the burst at once, then the rate over the window (q = burst + rate × w).`,
      schema: { examples: policies },
    },
    [RATE_LIMIT_HEADER]: {
      description:
        'What is left of the limit: r requests may be sent at once now; t is the seconds (rounded up) until r next grows, and no more than r are admitted sooner. Absent while a limit held in PostgreSQL cannot be decided and the service admits (--rate-limit-store-down open).',
    },
  };
}

const RATE_LIMITED_ROW = (limits: RateLimits, kind: 'reads' | 'writes'): RowDoc => ({
  key: '429',
  description:
    'Too Many Requests: the client is over its rate limit for this kind of request. Nothing ran; an Idempotency-Key replay is answered whatever the limit.',
  error: rateLimited({
    'Retry-After': '1',
    [RATE_LIMIT_POLICY_HEADER]: policyField(kind, limits) ?? '',
    [RATE_LIMIT_HEADER]: `"${kind}";r=0;t=1`,
  }),
});

/** The header trusted proxies name the client in, read on every limited operation. */
function proxyHeader(trusted: TrustedProxies): RequestHeaderDoc {
  const name = trusted.header === 'forwarded' ? 'Forwarded' : 'X-Forwarded-For';
  return {
    name,
    required: false,
    description: `Read only from a proxy the service trusts (--trust-proxy): the client the rate limit counts, the nearest address it names that is not a trusted proxy. From any other peer, and the other of X-Forwarded-For and Forwarded always, it is ignored.`,
    schema: { type: 'string' },
  };
}

export function rateLimitDocs(settings: RateLimitSettings): StageDocs {
  const { limits, trustedProxies } = settings;
  return {
    headers: headerDocs(limits),
    responseHeaders: (route) =>
      limitedKind(route.method, limits) === undefined
        ? []
        : [{ names: [RATE_LIMIT_POLICY_HEADER, RATE_LIMIT_HEADER] }],
    requestHeaders: (route) =>
      trustedProxies === undefined || limitedKind(route.method, limits) === undefined
        ? []
        : [proxyHeader(trustedProxies)],
    rows: (route) => {
      const kind = limitedKind(route.method, limits);
      return kind === undefined ? [] : [RATE_LIMITED_ROW(limits, kind)];
    },
  };
}
