// Tracing's settings (docs/operating.md#traces): off unless a collector is named, read from the
// SDK's standard variables. A value the service cannot use is warned of once and ignored, never
// fatal (the variables are often set for a whole fleet); only the project's own --otel-endpoint is
// refused at start.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, readConfig, type Config } from '../../src/config.js';
import { settingsOf } from '../../src/features/feature.js';
import { tracing } from '../../src/features/tracing/feature.js';
import { startServiceProcess } from '../support/service-process.js';
import { startReceiver } from '../support/otlp-receiver.js';
import { logLines, spanOf } from '../support/traced-service.js';

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };

/** Tracing's settings in a configuration; undefined while it is off. */
const tracingIn = (config: Config) => settingsOf(config.features, tracing);

test('tracing is off by default, and on when an OTLP endpoint variable or --otel-endpoint names a collector', () => {
  assert.equal(tracingIn(readConfig([], {})), undefined);
  assert.equal(
    tracingIn(readConfig([], { OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' })),
    undefined,
  );
  assert.equal(tracingIn(readConfig([], ENDPOINT))?.tracesUrl, 'http://127.0.0.1:4318/v1/traces');
  assert.equal(
    tracingIn(readConfig([], { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c.example/otlp/' }))
      ?.tracesUrl,
    'https://c.example/otlp/v1/traces',
  );
  assert.equal(
    tracingIn(readConfig([], { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/custom/path' }))
      ?.tracesUrl,
    'http://c:4318/custom/path',
  );
  assert.equal(
    tracingIn(
      readConfig(['--otel-endpoint', 'http://opt:4318'], {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://env:1/x',
      }),
    )?.tracesUrl,
    'http://opt:4318/v1/traces',
  );
});

test('OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn tracing off whatever else is set', () => {
  assert.equal(
    tracingIn(readConfig(['--otel-endpoint', 'http://opt:4318'], { OTEL_SDK_DISABLED: 'true' })),
    undefined,
  );
  assert.equal(tracingIn(readConfig([], { ...ENDPOINT, OTEL_SDK_DISABLED: 'TRUE' })), undefined);
  assert.equal(tracingIn(readConfig([], { ...ENDPOINT, OTEL_TRACES_EXPORTER: 'none' })), undefined);
  assert.equal(tracingIn(readConfig([], { ...ENDPOINT, OTEL_TRACES_EXPORTER: 'NONE' })), undefined);
  assert.notEqual(
    tracingIn(readConfig([], { ...ENDPOINT, OTEL_SDK_DISABLED: 'false' })),
    undefined,
  );
});

test('the standard variables are read: protocol, headers, resource, sampler, the batch processor bounds, propagators and known methods', () => {
  const config = readConfig([], {
    ...ENDPOINT,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_HEADERS: 'api-key=abc%20def,x-tenant=7',
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=8',
    OTEL_SERVICE_NAME: 'svc',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.25',
    OTEL_BSP_MAX_QUEUE_SIZE: '100',
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '10',
    OTEL_BSP_SCHEDULE_DELAY: '250',
    OTEL_BSP_EXPORT_TIMEOUT: '1000',
    OTEL_EXPORTER_OTLP_TIMEOUT: '2000',
    OTEL_PROPAGATORS: 'tracecontext',
    OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS: 'GET,POST,PROPFIND',
  });
  assert.deepEqual(config.warnings, []);
  assert.deepEqual(tracingIn(config), {
    tracesUrl: 'http://127.0.0.1:4318/v1/traces',
    protocol: 'http/json',
    headers: { 'api-key': 'abc def', 'x-tenant': '8' },
    exportTimeoutMs: 2000,
    serviceName: 'svc',
    resourceAttributes: { 'deployment.environment.name': 'prod' },
    sampler: 'parentbased_traceidratio',
    samplerRatio: 0.25,
    batch: {
      scheduledDelayMs: 250,
      exportTimeoutMs: 1000,
      maxQueueSize: 100,
      maxExportBatchSize: 10,
    },
    propagators: { traceContext: true, baggage: false },
    knownMethods: new Set(['GET', 'POST', 'PROPFIND']),
  });
});

/** The config of `env` beside the endpoint, and its one warning (asserted to be the only one, one line, naming `variable`). */
function warned(env: NodeJS.ProcessEnv, variable: string): { config: Config; message: string } {
  const config = readConfig([], { ...ENDPOINT, ...env });
  assert.equal(config.warnings.length, 1, JSON.stringify(config.warnings));
  const [warning] = config.warnings as [Config['warnings'][number]];
  assert.equal(warning.setting, variable);
  assert.ok(warning.message.startsWith(`${variable}: `), warning.message);
  assert.ok(!warning.message.includes('\n'), warning.message);
  return { config, message: warning.message };
}

test('OTEL_SDK_DISABLED=yes is neither true nor false: warned of, and false used (tracing stays on)', () => {
  const { config, message } = warned({ OTEL_SDK_DISABLED: 'yes' }, 'OTEL_SDK_DISABLED');
  assert.notEqual(tracingIn(config), undefined);
  assert.match(message, /"yes".*false used instead/);
});

test('OTEL_TRACES_SAMPLER is read case-insensitively: ALWAYS_OFF is always_off, without a warning', () => {
  const config = readConfig([], { ...ENDPOINT, OTEL_TRACES_SAMPLER: 'ALWAYS_OFF' });
  assert.deepEqual(config.warnings, []);
  assert.equal(tracingIn(config)?.sampler, 'always_off');
  assert.equal(
    tracingIn(
      readConfig([], {
        ...ENDPOINT,
        OTEL_TRACES_SAMPLER: 'TraceIdRatio',
        OTEL_TRACES_SAMPLER_ARG: '0.1',
      }),
    )?.samplerRatio,
    0.1,
  );
});

test('OTEL_TRACES_SAMPLER=bogus (or one this service lacks) is warned of, and the default parentbased_always_on used', () => {
  for (const sampler of ['bogus', 'jaeger_remote', 'xray']) {
    const { config, message } = warned({ OTEL_TRACES_SAMPLER: sampler }, 'OTEL_TRACES_SAMPLER');
    assert.equal(tracingIn(config)?.sampler, 'parentbased_always_on');
    assert.match(message, /parentbased_always_on used instead$/);
  }
});

test('OTEL_TRACES_SAMPLER_ARG=bogus (or out of 0 to 1) is warned of, and the default ratio 1.0 used', () => {
  for (const arg of ['bogus', '1.5', '-0.1', '']) {
    const env = { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: arg };
    if (arg === '') {
      // Empty is unset, as the specification reads it: no warning.
      assert.deepEqual(readConfig([], { ...ENDPOINT, ...env }).warnings, []);
      continue;
    }
    const { config } = warned(env, 'OTEL_TRACES_SAMPLER_ARG');
    assert.equal(tracingIn(config)?.samplerRatio, 1);
  }
  // The argument of a sampler that takes none is ignored, as the specification says.
  assert.deepEqual(readConfig([], { ...ENDPOINT, OTEL_TRACES_SAMPLER_ARG: 'bogus' }).warnings, []);
});

test("OTEL_BSP_MAX_EXPORT_BATCH_SIZE larger than the queue is warned of, and the queue's size used", () => {
  const { config, message } = warned(
    { OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4096' },
    'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
  );
  assert.equal(tracingIn(config)?.batch.maxExportBatchSize, 2048);
  assert.match(message, /queue's size.*2048 used instead/);
  const smaller = warned(
    { OTEL_BSP_MAX_QUEUE_SIZE: '10', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '11' },
    'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
  );
  assert.equal(tracingIn(smaller.config)?.batch.maxExportBatchSize, 10);
});

test('a malformed OTEL_RESOURCE_ATTRIBUTES is discarded whole, with a warning', () => {
  for (const attributes of ['a=%E0%A4%A', 'novalue', 'a=1,=2', 'a=b\u0001']) {
    const { config } = warned(
      { OTEL_RESOURCE_ATTRIBUTES: attributes.replace('\\u0001', '\u0001') },
      'OTEL_RESOURCE_ATTRIBUTES',
    );
    assert.deepEqual(tracingIn(config)?.resourceAttributes, {});
  }
});

test('OTEL_TRACES_EXPORTER: otlp and none are supported; console (or another) is warned of, and otlp used', () => {
  for (const exporter of ['console', 'zipkin', 'otlp,console']) {
    const { config, message } = warned({ OTEL_TRACES_EXPORTER: exporter }, 'OTEL_TRACES_EXPORTER');
    assert.equal(tracingIn(config)?.protocol, 'http/protobuf');
    assert.match(message, /otlp used instead$/);
  }
  assert.deepEqual(readConfig([], { ...ENDPOINT, OTEL_TRACES_EXPORTER: 'OTLP' }).warnings, []);
});

test('OTEL_PROPAGATORS is read: none, tracecontext, baggage; another is warned of and ignored', () => {
  const read = (value: string): Config => readConfig([], { ...ENDPOINT, OTEL_PROPAGATORS: value });
  assert.deepEqual(tracingIn(read('none'))?.propagators, { traceContext: false, baggage: false });
  assert.deepEqual(tracingIn(read('tracecontext'))?.propagators, {
    traceContext: true,
    baggage: false,
  });
  assert.deepEqual(tracingIn(read('baggage'))?.propagators, { traceContext: false, baggage: true });
  assert.deepEqual(read('TraceContext, Baggage').warnings, []);
  assert.deepEqual(tracingIn(readConfig([], ENDPOINT))?.propagators, {
    traceContext: true,
    baggage: true,
  });
  const mixed = warned({ OTEL_PROPAGATORS: 'b3,tracecontext' }, 'OTEL_PROPAGATORS');
  assert.deepEqual(tracingIn(mixed.config)?.propagators, { traceContext: true, baggage: false });
  // Nothing this service reads: the default, tracecontext and baggage.
  const none = warned({ OTEL_PROPAGATORS: 'b3,jaeger' }, 'OTEL_PROPAGATORS');
  assert.deepEqual(tracingIn(none.config)?.propagators, { traceContext: true, baggage: true });
});

test('OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS replaces the known methods; a list holding something no method is warned of and the default used', () => {
  const { config } = warned(
    { OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS: 'GET,NOT A METHOD' },
    'OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS',
  );
  assert.ok(tracingIn(config)?.knownMethods.has('PATCH'));
  assert.ok(tracingIn(config)?.knownMethods.has('QUERY'));
  assert.ok(!tracingIn(config)?.knownMethods.has('PROPFIND'));
});

test('the other variables: a value that cannot be used is warned of, and its default (or nearest usable value) used', () => {
  const cases: readonly [NodeJS.ProcessEnv, string, (config: Config) => unknown, unknown][] = [
    [
      { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      'OTEL_EXPORTER_OTLP_PROTOCOL',
      (c) => tracingIn(c)?.protocol,
      'http/protobuf',
    ],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'HTTP/JSON' }, '', (c) => tracingIn(c)?.protocol, 'http/json'],
    [
      { OTEL_BSP_MAX_QUEUE_SIZE: '0' },
      'OTEL_BSP_MAX_QUEUE_SIZE',
      (c) => tracingIn(c)?.batch.maxQueueSize,
      2048,
    ],
    [
      { OTEL_BSP_MAX_QUEUE_SIZE: '1000000' },
      'OTEL_BSP_MAX_QUEUE_SIZE',
      (c) => tracingIn(c)?.batch.maxQueueSize,
      65536,
    ],
    [
      { OTEL_BSP_SCHEDULE_DELAY: 'soon' },
      'OTEL_BSP_SCHEDULE_DELAY',
      (c) => tracingIn(c)?.batch.scheduledDelayMs,
      5000,
    ],
    [
      { OTEL_EXPORTER_OTLP_TIMEOUT: '-1' },
      'OTEL_EXPORTER_OTLP_TIMEOUT',
      (c) => tracingIn(c)?.exportTimeoutMs,
      10000,
    ],
    [
      { OTEL_EXPORTER_OTLP_TIMEOUT: '600000' },
      'OTEL_EXPORTER_OTLP_TIMEOUT',
      (c) => tracingIn(c)?.exportTimeoutMs,
      60000,
    ],
    [
      { OTEL_EXPORTER_OTLP_HEADERS: 'novalue' },
      'OTEL_EXPORTER_OTLP_HEADERS',
      (c) => tracingIn(c)?.headers,
      {},
    ],
    // A header's name must be a token, and its value Latin-1: node:http would refuse each export.
    [
      { OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=7,api(key)=abc' },
      'OTEL_EXPORTER_OTLP_HEADERS',
      (c) => tracingIn(c)?.headers,
      {},
    ],
    [
      { OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-team=%E2%82%AC' },
      'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
      (c) => tracingIn(c)?.headers,
      {},
    ],
    // Resource attribute keys are not header names: a `/` is fine there.
    [
      { OTEL_RESOURCE_ATTRIBUTES: 'k8s/pod=web-1' },
      '',
      (c) => tracingIn(c)?.resourceAttributes,
      { 'k8s/pod': 'web-1' },
    ],
  ];
  for (const [env, variable, read, expected] of cases) {
    if (variable === '') {
      const config = readConfig([], { ...ENDPOINT, ...env });
      assert.deepEqual(config.warnings, []);
      assert.deepEqual(read(config), expected);
      continue;
    }
    assert.deepEqual(read(warned(env, variable).config), expected, JSON.stringify(env));
  }
});

test('a malformed endpoint variable is warned of and ignored: tracing stays off, or uses the other variable', () => {
  const off = readConfig([], { OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' });
  assert.equal(tracingIn(off), undefined);
  assert.equal(off.warnings[0]?.setting, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const base = readConfig([], {
    ...ENDPOINT,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c/x?q=1',
  });
  assert.equal(tracingIn(base)?.tracesUrl, 'http://127.0.0.1:4318/v1/traces');
  assert.equal(base.warnings[0]?.setting, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
});

test("only the project's own option stops the service at start: a malformed --otel-endpoint, with one line", () => {
  for (const [args, message] of [
    [
      ['--otel-endpoint', 'ftp://collector:4318'],
      /^--otel-endpoint must be an http:\/\/ or https:\/\/ URL, not "ftp:\/\/collector:4318"$/,
    ],
    [['--otel-endpoint', 'http://c/x?q=1'], /^--otel-endpoint must be an http/],
    [['--otel-endpoint='], /^--otel-endpoint needs a value$/],
  ] as const) {
    assert.throws(
      () => readConfig(args, {}),
      (error: unknown) => error instanceof ConfigError && message.test(error.message),
      args.join(' '),
    );
  }
});

test('a service started with every bad value the issue lists starts, says each once in one warning line, and traces', async () => {
  const receiver = await startReceiver();
  const env = {
    OTEL_SDK_DISABLED: 'yes',
    OTEL_TRACES_SAMPLER: 'bogus',
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4096',
    OTEL_RESOURCE_ATTRIBUTES: 'a=%E0%A4%A',
    OTEL_TRACES_EXPORTER: 'console',
    OTEL_PROPAGATORS: 'b3',
    OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS: 'GET,NOT A METHOD',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    OTEL_BSP_SCHEDULE_DELAY: '50',
  };
  const service = await startServiceProcess(
    ['--otel-endpoint', receiver.url, '--db', 'memory'],
    1,
    {
      env,
    },
  );
  try {
    const response = await fetch(`${service.urls[0] as string}/todos/1`);
    await response.arrayBuffer();
    assert.equal(response.status, 200);
    await spanOf(receiver, response.headers.get('x-request-id') as string);
    await service.kill();
    // pino's level 40 is warn.
    const warnings = logLines(service).filter((line) => line.level === 40);
    const named = warnings.map((line) => line.setting).sort();
    assert.deepEqual(
      named,
      Object.keys(env)
        .filter((name) => name !== 'OTEL_BSP_SCHEDULE_DELAY')
        .sort(),
    );
    for (const line of warnings)
      assert.ok(String(line.msg).startsWith(`${String(line.setting)}: `));
  } finally {
    await service.kill();
    await receiver.close();
  }
});

test('a warning never repeats what may be a credential: a header, an endpoint URL', () => {
  const headers = readConfig([], {
    ...ENDPOINT,
    OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20s3cret-token,broken',
  });
  assert.equal(headers.warnings[0]?.setting, 'OTEL_EXPORTER_OTLP_HEADERS');
  assert.match(headers.warnings[0]?.message ?? '', /entry 2 is not key=value/);
  const endpoint = readConfig([], {
    OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://user:s3cret-token@c:4318',
  });
  assert.equal(endpoint.warnings[0]?.setting, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  for (const { message } of [...headers.warnings, ...endpoint.warnings])
    assert.ok(!message.includes('s3cret'), message);
});
