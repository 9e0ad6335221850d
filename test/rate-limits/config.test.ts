// --rate-limit and its companions as the configuration reads them, from the command line or the
// environment: off by default, and a bad value refused at start with a message that says what.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, readConfig } from '../../src/config.js';
import { settingsOf } from '../../src/features/feature.js';
import { rateLimits } from '../../src/features/rate-limits/feature.js';

/** The rate limits' settings the options give; undefined while they are off. */
const limitsOf = (argv: readonly string[], env: NodeJS.ProcessEnv) =>
  settingsOf(readConfig(argv, env).features, rateLimits);

const POSTGRES = ['--db', 'postgres://postgres@127.0.0.1:5432/test'];

test('rate limits are off by default; once on, the store-down mode is open and no proxy is trusted', () => {
  assert.equal(limitsOf([], {}), undefined);
  const limited = limitsOf(['--rate-limit', 'reads=1/s:1'], {});
  assert.equal(limited?.trustedProxies, undefined);
  assert.equal(limited?.whenDown, 'open');
});

test('--rate-limit and SVC_RATE_LIMIT give the same limits; the option wins over the variable', () => {
  const fromFlag = limitsOf(['--rate-limit', 'writes=20/s:40'], {});
  const fromEnv = limitsOf([], { SVC_RATE_LIMIT: 'writes=20/s:40' });
  assert.deepEqual(fromFlag?.limits, { writes: { perSecond: 20, burst: 40 } });
  assert.deepEqual(fromEnv?.limits, fromFlag?.limits);
  assert.deepEqual(
    limitsOf(['--rate-limit=reads=1/s:2'], { SVC_RATE_LIMIT: 'writes=20/s:40' })?.limits,
    { reads: { perSecond: 1, burst: 2 } },
  );
});

test('a bad value, from the option or the variable, is refused at start naming the option', () => {
  const refusals: [readonly string[], NodeJS.ProcessEnv, RegExp][] = [
    [['--rate-limit', 'writes=20'], {}, /^--rate-limit: "writes=20" is not writes=RATE\/s:BURST/],
    [[], { SVC_RATE_LIMIT: 'reads=1/s:0' }, /^--rate-limit: the burst of reads must be from 1/],
    [
      ['--rate-limit', 'reads=1/s:1', '--trust-proxy', 'proxy.local'],
      {},
      /^--trust-proxy: "proxy.local" is not an IP address/,
    ],
    [
      ['--trust-proxy', '10.0.0.1'],
      {},
      /--trust-proxy names the client for the rate limits: it needs --rate-limit/,
    ],
    [
      ['--rate-limit', 'reads=1/s:1', ...POSTGRES, '--rate-limit-store-down', 'maybe'],
      {},
      /--rate-limit-store-down must be open or closed/,
    ],
    [
      ['--rate-limit', 'reads=1/s:1', '--rate-limit-store-down', 'closed'],
      {},
      /needs --rate-limit and --db postgres/,
    ],
    [
      [
        '--rate-limit',
        'reads=1/s:1',
        '--trust-proxy',
        '10.0.0.1',
        '--trust-proxy-header',
        'x-real-ip',
      ],
      {},
      /^--trust-proxy-header must be x-forwarded-for or forwarded, not "x-real-ip"$/,
    ],
    [
      ['--rate-limit', 'reads=1/s:1'],
      { SVC_TRUST_PROXY_HEADER: 'forwarded' },
      /--trust-proxy-header .* it needs --trust-proxy$/,
    ],
  ];
  for (const [argv, env, message] of refusals) {
    assert.throws(
      () => readConfig(argv, env),
      (error: unknown) => error instanceof ConfigError && message.test(error.message),
      argv.join(' '),
    );
  }
});

test('--trust-proxy and --rate-limit-store-down are read with their variables', () => {
  const config = limitsOf([...POSTGRES], {
    SVC_RATE_LIMIT: 'writes=1/s:1',
    SVC_TRUST_PROXY: '10.0.0.0/8',
    SVC_RATE_LIMIT_STORE_DOWN: 'closed',
  });
  assert.equal(config?.trustedProxies?.text, '10.0.0.0/8');
  assert.equal(config?.whenDown, 'closed');
});

test('--trust-proxy-header names the one header the proxies set: x-forwarded-for by default, or forwarded, from the option or its variable', () => {
  const limited = ['--rate-limit', 'reads=1/s:1', '--trust-proxy', '10.0.0.1'];
  assert.equal(limitsOf(limited, {})?.trustedProxies?.header, 'x-forwarded-for');
  assert.equal(
    limitsOf([...limited, '--trust-proxy-header', 'Forwarded'], {})?.trustedProxies?.header,
    'forwarded',
  );
  assert.equal(
    limitsOf(limited, { SVC_TRUST_PROXY_HEADER: 'forwarded' })?.trustedProxies?.header,
    'forwarded',
  );
  assert.equal(
    limitsOf([...limited, '--trust-proxy-header', 'x-forwarded-for'], {
      SVC_TRUST_PROXY_HEADER: 'forwarded',
    })?.trustedProxies?.header,
    'x-forwarded-for',
  );
});
