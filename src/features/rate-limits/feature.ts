// Rate limits as a feature (feature.ts): off unless --rate-limit sets them. Each service gets a
// limiter (limiter-for.ts: shared through PostgreSQL when its data is there, else in process), the
// stage that decides before the input is read and its twin for keyed writes (stage.ts), the
// counter of refusals (metrics.ts), and, behind trusted proxies, the client they name
// (client-address.ts).
import type { RateLimiter } from '../../rate-limits/limiter.js';
import { parseRateLimits, type RateLimits } from '../../rate-limits/policy.js';
import { ConfigError, type OptionValues } from '../../options.js';
import type { Feature } from '../feature.js';
import {
  parseTrustedProxies,
  PROXY_HEADERS,
  type ProxyHeader,
  type TrustedProxies,
} from './client-address.js';
import { RateLimitGate, WHEN_LIMITER_DOWN_DEFAULT, type WhenLimiterDown } from './gate.js';
import { limiterFor } from './limiter-for.js';
import { rateLimitedCounter } from './metrics.js';
import { rateLimitStage } from './stage.js';

export interface RateLimitSettings {
  readonly limits: RateLimits;
  /** With limits held in PostgreSQL: what a request gets while the database cannot decide. */
  readonly whenDown: WhenLimiterDown;
  /** Proxies whose header (--trust-proxy-header) names the client (--trust-proxy). */
  readonly trustedProxies: TrustedProxies | undefined;
  /** A limiter made by the caller (tests); undefined: the one limiter-for.ts makes. */
  readonly limiter?: RateLimiter;
}

export const rateLimits: Feature<RateLimitSettings> = {
  name: 'rate-limits',
  options: [
    {
      name: 'rate-limit',
      variable: 'SVC_RATE_LIMIT',
      takes: 'value',
      usage: `--rate-limit LIMITS  requests per client: writes=RATE/s:BURST,reads=RATE/s:BURST, either part
                       optional (SVC_RATE_LIMIT, default none: no limits); with --db postgres://
                       the limits hold across every instance on the database`,
    },
    {
      name: 'rate-limit-store-down',
      variable: 'SVC_RATE_LIMIT_STORE_DOWN',
      takes: 'value',
      usage: `--rate-limit-store-down open|closed
                       with --db postgres://, while the database cannot decide: admit (open) or
                       answer 503 (closed) (SVC_RATE_LIMIT_STORE_DOWN, default open)`,
    },
    {
      name: 'trust-proxy',
      variable: 'SVC_TRUST_PROXY',
      takes: 'value',
      usage: `--trust-proxy LIST   addresses or subnets of proxies whose --trust-proxy-header names the client
                       for the rate limits, e.g. 10.0.0.0/8,::1 (SVC_TRUST_PROXY, default none)`,
    },
    {
      name: 'trust-proxy-header',
      variable: 'SVC_TRUST_PROXY_HEADER',
      takes: 'value',
      usage: `--trust-proxy-header x-forwarded-for|forwarded
                       the one header the trusted proxies set; the other is ignored
                       (SVC_TRUST_PROXY_HEADER, default x-forwarded-for)`,
    },
  ],
  configure(values) {
    const text = values.text('rate-limit');
    const limits = text === undefined ? undefined : parseRateLimits(text);
    if (typeof limits === 'string') throw new ConfigError(`--rate-limit: ${limits}`);
    const trustedProxies = readTrustedProxies(values);
    if (trustedProxies !== undefined && limits === undefined)
      throw new ConfigError(
        '--trust-proxy names the client for the rate limits: it needs --rate-limit',
      );
    const whenDown = readWhenDown(values, limits !== undefined);
    return limits === undefined ? undefined : { limits, whenDown, trustedProxies };
  },
  async join(settings, service) {
    const made =
      settings.limiter === undefined
        ? await limiterFor(
            service.service,
            settings.limits,
            service.db,
            service.log,
            service.pooler,
          )
        : { limiter: settings.limiter, rider: undefined };
    const { limiter } = made;
    return {
      store: { rider: made.rider },
      sharedPeers: settings.trustedProxies?.list,
      said: { rateLimits: service.db.kind === 'postgres' ? 'postgres' : 'in-process' },
      stages(routes) {
        const gate = new RateLimitGate({
          limits: settings.limits,
          limiter,
          whenDown: settings.whenDown,
          trustedProxies: settings.trustedProxies,
          routes,
          log: service.log,
          onLimited:
            service.metrics === undefined
              ? undefined
              : rateLimitedCounter(service.service, service.metrics),
        });
        return [rateLimitStage(gate, settings, 'unkeyed'), rateLimitStage(gate, settings, 'keyed')];
      },
      close: () => limiter.close(),
    };
  },
};

function readTrustedProxies(values: OptionValues): TrustedProxies | undefined {
  const text = values.text('trust-proxy');
  const header = values.text('trust-proxy-header')?.toLowerCase();
  if (header !== undefined && !PROXY_HEADERS.includes(header as ProxyHeader))
    throw new ConfigError(
      `--trust-proxy-header must be x-forwarded-for or forwarded, not "${header}"`,
    );
  if (header !== undefined && text === undefined)
    throw new ConfigError(
      '--trust-proxy-header says where the trusted proxies name the client: it needs --trust-proxy',
    );
  const trusted =
    text === undefined ? undefined : parseTrustedProxies(text, header as ProxyHeader | undefined);
  if (typeof trusted === 'string') throw new ConfigError(`--trust-proxy: ${trusted}`);
  return trusted;
}

/** --rate-limit-store-down, which only means something for limits held in PostgreSQL. */
function readWhenDown(values: OptionValues, limited: boolean): WhenLimiterDown {
  const text = values.text('rate-limit-store-down');
  if (text === undefined) return WHEN_LIMITER_DOWN_DEFAULT;
  if (text !== 'open' && text !== 'closed')
    throw new ConfigError(`--rate-limit-store-down must be open or closed, not "${text}"`);
  const db = values.text('db');
  const shared = db?.startsWith('postgres://') === true || db?.startsWith('postgresql://') === true;
  if (!(limited && shared))
    throw new ConfigError(
      '--rate-limit-store-down is for limits held in PostgreSQL: it needs --rate-limit and --db postgres://…',
    );
  return text;
}
