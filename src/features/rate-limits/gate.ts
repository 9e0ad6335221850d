// Rate limits in the request pipeline (off unless --rate-limit): which requests count, under which
// client (client-address.ts), the decision of the limiter (src/rate-limits/), and the response's
// headers, after draft-ietf-httpapi-ratelimit-headers-11: RateLimit-Policy names each policy with
// its window w (seconds in which a whole burst comes back) and quota q, the most GCRA admits in any
// w seconds (burst + rate × w); RateLimit says what is left now (r) and in how many seconds r next
// grows (t: "until additional quota is made available", rounded up): no more than r are admitted
// before that moment, and a 429's t is its Retry-After. A refused request is answered 429
// (RATE_LIMITED) with Retry-After, changes nothing and costs no store work.
//
// Only the service's own operations count: the docs, /healthz, /readyz and /metrics never do. A
// write with an Idempotency-Key is decided later, by the Idempotency-Key gate, after it has looked
// for the key's recorded response: a replay does no work, and is answered even over the limit.
import type { IncomingMessage } from 'node:http';
import { isPromise } from '../../common/eventually.js';
import type { Logger } from '../../observe/log.js';
import type { Decision } from '../../rate-limits/decision.js';
import { LimiterUnavailable, type RateLimiter } from '../../rate-limits/limiter.js';
import { kindOf, type Rate, type RateLimits, type RequestKind } from '../../rate-limits/policy.js';
import { clientAddress, type TrustedProxies } from './client-address.js';
import { ApiError, serviceUnavailable } from '../../http/errors.js';
import type { Route } from '../../http/route.js';

/** What the service does with a request when the shared limiter cannot decide (its database is down). */
export type WhenLimiterDown = 'open' | 'closed';
export const WHEN_LIMITER_DOWN_DEFAULT: WhenLimiterDown = 'open';

export const RATE_LIMIT_HEADER = 'RateLimit';
export const RATE_LIMIT_POLICY_HEADER = 'RateLimit-Policy';
/** The revision of draft-ietf-httpapi-ratelimit-headers whose fields these are. */
export const RATE_LIMIT_DRAFT = 'draft-ietf-httpapi-ratelimit-headers-11';

/** At most one warning a minute says how many requests were refused since the last one. */
const WARN_EVERY_MS = 60_000;
/**
 * Clients refused lately, kept for a second at most, and at most this many: a read of a client not
 * among them runs while the shared limiter decides (mayRunAhead). Past the bound, no read runs
 * ahead.
 */
export const REFUSED_CLIENTS_MAX = 10_000;
const REFUSED_FORGOTTEN_MS = 1_000;

export interface RateLimitOptions {
  readonly limits: RateLimits;
  readonly limiter: RateLimiter;
  /** Shared limiter down: admit (open) or answer 503 (closed). */
  readonly whenDown: WhenLimiterDown;
  readonly trustedProxies?: TrustedProxies;
  /** The service's own routes: the only ones limited. */
  readonly routes: readonly Route[];
  readonly log: Logger;
  /** Told each refusal (the metrics' counter). */
  readonly onLimited?: (kind: RequestKind) => void;
}

/** Header name, value, name, value… as the pipeline writes them. */
export type LimitHeaders = string[];

export const rateLimited = (headers: Readonly<Record<string, string>>): ApiError =>
  new ApiError('RATE_LIMITED', { headers });

/**
 * The policy's field value: `"reads";q=800;w=2` for 200/s after a burst of 400. The window w is the
 * seconds in which a whole burst comes back (burst ÷ rate, rounded up); q is exactly the most
 * admitted in any w seconds: the burst at its start, then one each interval (gcra()'s bound).
 */
export function policyField(kind: RequestKind, limits: RateLimits): string | undefined {
  const rate = limits[kind];
  if (rate === undefined) return undefined;
  const windowSeconds = Math.max(1, Math.ceil(rate.burst / rate.perSecond - 1e-9));
  const intervalMs = 1000 / rate.perSecond;
  return `"${kind}";q=${rate.burst + Math.floor((windowSeconds * 1000) / intervalMs + 1e-9)};w=${windowSeconds}`;
}

/**
 * A limited kind's fields, the constant parts written once: every admitted response carries them,
 * so that building its RateLimit value is two additions of numbers to a prefix.
 */
interface KindFields {
  /** RateLimit-Policy's whole value. */
  readonly policy: string;
  /** RateLimit's value up to the number left: `"reads";r=`. */
  readonly statePrefix: string;
  readonly burst: number;
}

function kindFields(kind: RequestKind, limits: RateLimits): KindFields | undefined {
  const policy = policyField(kind, limits);
  return policy === undefined
    ? undefined
    : { policy, statePrefix: `"${kind}";r=`, burst: (limits[kind] as Rate).burst };
}

const seconds = (ms: number): number => Math.ceil(ms / 1000);

export class RateLimitGate {
  private readonly limited: ReadonlySet<Route>;
  private readonly writes: KindFields | undefined;
  private readonly reads: KindFields | undefined;
  private refusedSinceWarn = 0;
  private warnedMs = -Infinity;
  /** Clients refused since `refusedSinceMs`: their reads wait for the decision. */
  private refusedLately = new Set<string>();
  private refusedSinceMs = 0;

  constructor(private readonly options: RateLimitOptions) {
    this.limited = new Set(options.routes);
    this.writes = kindFields('writes', options.limits);
    this.reads = kindFields('reads', options.limits);
  }

  /** The kind a request to `route` counts under, or undefined when it does not count. */
  kindOf(route: Route, method: string): RequestKind | undefined {
    if (!this.limited.has(route)) return undefined;
    const kind = kindOf(method);
    return kind === undefined || this.fieldsOf(kind) === undefined ? undefined : kind;
  }

  private fieldsOf(kind: RequestKind): KindFields | undefined {
    return kind === 'writes' ? this.writes : this.reads;
  }

  /**
   * True when a request whose decision waits for the shared limiter may run meanwhile, its response
   * held until the decision: a read (it changes nothing, so a refusal after it is still a refusal
   * that changed nothing) of a client not refused lately. A client over its limit is thus refused
   * without reaching the store, and one within it does not wait for two round trips in a row.
   */
  mayRunAhead(method: string, req: IncomingMessage): boolean {
    if (kindOf(method) !== 'reads') return false;
    const nowMs = Date.now();
    if (nowMs - this.refusedSinceMs >= REFUSED_FORGOTTEN_MS) {
      this.refusedLately = new Set();
      this.refusedSinceMs = nowMs;
    }
    return (
      this.refusedLately.size < REFUSED_CLIENTS_MAX &&
      !this.refusedLately.has(clientAddress(req, this.options.trustedProxies))
    );
  }

  /** True when the Idempotency-Key gate decides for this request, after its replay lookup. */
  decidedByKeyGate(route: Route, req: IncomingMessage): boolean {
    return route.idempotent !== undefined && req.headers['idempotency-key'] !== undefined;
  }

  /**
   * The request's admission: the headers its response carries; throws (or rejects with) its 429,
   * or, with the shared limiter down and the service closed, its 503.
   */
  admit(kind: RequestKind, req: IncomingMessage): LimitHeaders | Promise<LimitHeaders> {
    const client = clientAddress(req, this.options.trustedProxies);
    let decided: Decision | Promise<Decision>;
    try {
      decided = this.options.limiter.decide(kind, client);
    } catch (error) {
      return this.limiterDown(error);
    }
    if (isPromise(decided))
      return decided.then(
        (decision) => this.headersFor(kind, client, decision),
        (error: unknown) => this.limiterDown(error),
      );
    return this.headersFor(kind, client, decided);
  }

  private headersFor(kind: RequestKind, client: string, decision: Decision): LimitHeaders {
    const { policy, statePrefix, burst } = this.fieldsOf(kind) as KindFields;
    // Rounded up, and at least 1 while r can grow: a request sent t seconds later finds r grown.
    const t = decision.remaining >= burst ? 0 : Math.max(1, seconds(decision.growsInMs));
    const state = statePrefix + decision.remaining + ';t=' + t;
    if (decision.admitted) return [RATE_LIMIT_POLICY_HEADER, policy, RATE_LIMIT_HEADER, state];
    this.refused(kind);
    if (this.refusedLately.size < REFUSED_CLIENTS_MAX) this.refusedLately.add(client);
    throw rateLimited({
      // A refusal's r is 0: it grows when a request is admitted again, so its t is the wait.
      'Retry-After': String(t),
      [RATE_LIMIT_POLICY_HEADER]: policy,
      [RATE_LIMIT_HEADER]: state,
    });
  }

  private limiterDown(error: unknown): LimitHeaders {
    if (!(error instanceof LimiterUnavailable)) throw error;
    if (this.options.whenDown === 'closed') throw serviceUnavailable();
    // Open: admitted, without headers (nothing is known of the limit now). The limiter's store
    // logs the outage once, when it begins.
    return [];
  }

  private refused(kind: RequestKind): void {
    this.options.onLimited?.(kind);
    this.refusedSinceWarn += 1;
    const nowMs = Date.now();
    if (nowMs - this.warnedMs < WARN_EVERY_MS) return;
    this.options.log.warn('requests refused over their rate limit', {
      refused: this.refusedSinceWarn,
      sinceMs: Number.isFinite(this.warnedMs) ? nowMs - this.warnedMs : undefined,
    });
    this.warnedMs = nowMs;
    this.refusedSinceWarn = 0;
  }
}
