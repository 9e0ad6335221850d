// Tracing's settings (docs/operating.md#traces): off unless a collector is named, read from the
// SDK's standard variables, and every bad value refused at start with one line.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, readConfig } from '../../src/config.js';
import { settingsOf } from '../../src/features/feature.js';
import { tracing as tracingFeature } from '../../src/features/tracing/feature.js';

/** Tracing's settings as the options give them; undefined while it is off. */
const tracingOf = (argv: readonly string[], env: NodeJS.ProcessEnv) =>
  settingsOf(readConfig(argv, env).features, tracingFeature);

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };

test('tracing is off by default, and on when an OTLP endpoint variable or --otel-endpoint names a collector', () => {
  assert.equal(tracingOf([], {}), undefined);
  assert.equal(
    tracingOf([], { OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' }),
    undefined,
  );
  assert.equal(tracingOf([], ENDPOINT)?.tracesUrl, 'http://127.0.0.1:4318/v1/traces');
  assert.equal(
    tracingOf([], { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c.example/otlp/' })?.tracesUrl,
    'https://c.example/otlp/v1/traces',
  );
  assert.equal(
    tracingOf([], { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/custom/path' })?.tracesUrl,
    'http://c:4318/custom/path',
  );
  assert.equal(
    tracingOf(['--otel-endpoint', 'http://opt:4318'], {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://env:1/x',
    })?.tracesUrl,
    'http://opt:4318/v1/traces',
  );
});

test('OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn tracing off whatever else is set', () => {
  assert.equal(
    tracingOf(['--otel-endpoint', 'http://opt:4318'], { OTEL_SDK_DISABLED: 'true' }),
    undefined,
  );
  assert.equal(tracingOf([], { ...ENDPOINT, OTEL_SDK_DISABLED: 'TRUE' }), undefined);
  assert.equal(tracingOf([], { ...ENDPOINT, OTEL_TRACES_EXPORTER: 'none' }), undefined);
  assert.notEqual(tracingOf([], { ...ENDPOINT, OTEL_SDK_DISABLED: 'false' }), undefined);
});

test('the standard variables are read: protocol, headers, resource, sampler and the batch processor bounds', () => {
  const tracing = tracingOf([], {
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
  });
  assert.deepEqual(tracing, {
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
  });
});

const BAD: readonly [NodeJS.ProcessEnv, readonly string[], RegExp][] = [
  [
    {},
    ['--otel-endpoint', 'ftp://collector:4318'],
    /^--otel-endpoint must be an http:\/\/ or https:\/\/ URL, not "ftp:\/\/collector:4318"$/,
  ],
  [{}, ['--otel-endpoint='], /^--otel-endpoint needs a value$/],
  [
    { OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' },
    [],
    /^OTEL_EXPORTER_OTLP_ENDPOINT must be an http/,
  ],
  [
    { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c/x?q=1' },
    [],
    /^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be a URL without a query/,
  ],
  [
    { ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
    [],
    /^OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json \(grpc is not supported\)/,
  ],
  [
    { ...ENDPOINT, OTEL_TRACES_SAMPLER: 'jaeger_remote' },
    [],
    /^OTEL_TRACES_SAMPLER must be one of/,
  ],
  [
    { ...ENDPOINT, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' },
    [],
    /^OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/,
  ],
  [
    { ...ENDPOINT, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: 'half' },
    [],
    /^OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/,
  ],
  [
    { ...ENDPOINT, OTEL_BSP_MAX_QUEUE_SIZE: '0' },
    [],
    /^OTEL_BSP_MAX_QUEUE_SIZE must be a whole number from 1 to 65536, not "0"$/,
  ],
  [
    { ...ENDPOINT, OTEL_BSP_MAX_QUEUE_SIZE: '1000000' },
    [],
    /^OTEL_BSP_MAX_QUEUE_SIZE must be a whole number/,
  ],
  [
    { ...ENDPOINT, OTEL_BSP_MAX_QUEUE_SIZE: '10', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '11' },
    [],
    /^OTEL_BSP_MAX_EXPORT_BATCH_SIZE must be a whole number from 1 to 10/,
  ],
  [
    { ...ENDPOINT, OTEL_BSP_SCHEDULE_DELAY: 'soon' },
    [],
    /^OTEL_BSP_SCHEDULE_DELAY must be a whole number/,
  ],
  [
    { ...ENDPOINT, OTEL_EXPORTER_OTLP_TIMEOUT: '-1' },
    [],
    /^OTEL_EXPORTER_OTLP_TIMEOUT must be a whole number/,
  ],
  [
    { ...ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS: 'novalue' },
    [],
    /^OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs/,
  ],
  [
    { ...ENDPOINT, OTEL_RESOURCE_ATTRIBUTES: 'a=%E0%A4%A' },
    [],
    /^OTEL_RESOURCE_ATTRIBUTES must be key=value pairs/,
  ],
  [{ ...ENDPOINT, OTEL_SDK_DISABLED: 'yes' }, [], /^OTEL_SDK_DISABLED must be true or false/],
  [
    { ...ENDPOINT, OTEL_TRACES_EXPORTER: 'zipkin' },
    [],
    /^OTEL_TRACES_EXPORTER must be otlp or none/,
  ],
];

test('a bad tracing value stops the service at start with one line saying which and why', () => {
  for (const [env, args, message] of BAD) {
    assert.throws(
      () => readConfig(args, env),
      (error: unknown) =>
        error instanceof ConfigError &&
        message.test(error.message) &&
        !error.message.includes('\n'),
      `${JSON.stringify(env)} ${args.join(' ')}`,
    );
  }
});
