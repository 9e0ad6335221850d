// Tracing's settings, read from the OpenTelemetry SDK's standard environment variables (and the
// --otel-endpoint option) once, at start, by src/config.ts. Nothing here loads the SDK: tracing is
// off unless an OTLP endpoint is named, and then src/features/tracing/tracing.ts loads it. Every value is
// checked here, so that a bad one stops the service at start with one line rather than being
// ignored by the SDK with a diagnostic nobody reads.

/** How spans travel to the collector: OTLP over HTTP, as protobuf (the default) or as JSON. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** OTEL_TRACES_SAMPLER's values this service knows; the SDK's default is parentbased_always_on. */
export const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

export interface TracingConfig {
  /** The URL spans are POSTed to (the traces endpoint itself, /v1/traces included). */
  readonly tracesUrl: string;
  readonly protocol: OtlpProtocol;
  /** OTEL_EXPORTER_OTLP_HEADERS, then OTEL_EXPORTER_OTLP_TRACES_HEADERS over it. */
  readonly headers: Readonly<Record<string, string>>;
  /** One export's time limit (OTEL_EXPORTER_OTLP_TIMEOUT, …_TRACES_TIMEOUT). */
  readonly exportTimeoutMs: number;
  /** OTEL_SERVICE_NAME; undefined: the service's own name (todo, bank). */
  readonly serviceName: string | undefined;
  /** OTEL_RESOURCE_ATTRIBUTES, as given (service.name in it counts when OTEL_SERVICE_NAME is unset). */
  readonly resourceAttributes: Readonly<Record<string, string>>;
  readonly sampler: SamplerName;
  /** The ratio of the *traceidratio samplers, 0 to 1 (OTEL_TRACES_SAMPLER_ARG, default 1). */
  readonly samplerRatio: number;
  /** The batch span processor's bounds (OTEL_BSP_*): the queue is the most spans held in memory. */
  readonly batch: {
    readonly scheduledDelayMs: number;
    readonly exportTimeoutMs: number;
    readonly maxQueueSize: number;
    readonly maxExportBatchSize: number;
  };
}

/** The defaults of the specification (OTEL_BSP_*, OTEL_EXPORTER_OTLP_TIMEOUT). */
const BSP_DEFAULTS = {
  scheduledDelayMs: 5000,
  exportTimeoutMs: 30_000,
  maxQueueSize: 2048,
  maxExportBatchSize: 512,
};
const EXPORT_TIMEOUT_MS_DEFAULT = 10_000;
/** Past this many spans queued, the queue alone would hold tens of megabytes: a mistake, refused. */
export const MAX_QUEUE_SIZE_MAX = 65_536;
/** A minute: longer limits only hold more spans in memory while a collector is away. */
const TIMEOUT_MS_MAX = 60_000;

/**
 * The settings, or undefined when tracing is off: no endpoint named, OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none. Throws an Error whose message is the one line to print.
 */
export function readTracingConfig(
  endpointOption: string | undefined,
  env: NodeJS.ProcessEnv,
): TracingConfig | undefined {
  const get = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === '' ? undefined : value;
  };
  const disabled = get('OTEL_SDK_DISABLED');
  if (disabled !== undefined && !/^(true|false)$/i.test(disabled))
    throw new Error(`OTEL_SDK_DISABLED must be true or false, not "${disabled}"`);
  const exporter = get('OTEL_TRACES_EXPORTER');
  if (exporter !== undefined && exporter !== 'otlp' && exporter !== 'none')
    throw new Error(`OTEL_TRACES_EXPORTER must be otlp or none, not "${exporter}"`);
  const tracesEndpoint = get('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const baseEndpoint = endpointOption ?? get('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (disabled?.toLowerCase() === 'true' || exporter === 'none') return undefined;
  if (baseEndpoint === undefined && tracesEndpoint === undefined) return undefined;

  // --otel-endpoint names the base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT does, and wins over both variables.
  const tracesUrl =
    endpointOption === undefined && tracesEndpoint !== undefined
      ? httpUrl(tracesEndpoint, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT')
      : `${httpUrl(baseEndpoint as string, endpointOption === undefined ? 'OTEL_EXPORTER_OTLP_ENDPOINT' : '--otel-endpoint').replace(/\/$/, '')}/v1/traces`;
  const protocol =
    get('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ??
    get('OTEL_EXPORTER_OTLP_PROTOCOL') ??
    'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new Error(
      `OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (grpc is not supported), not "${protocol}"`,
    );
  }
  const { sampler, samplerRatio } = readSampler(get);
  const whole = wholeOf(get);
  const batch = readBatch(whole);
  const exportTimeoutMs = whole(
    'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT',
    whole('OTEL_EXPORTER_OTLP_TIMEOUT', EXPORT_TIMEOUT_MS_DEFAULT, 1, TIMEOUT_MS_MAX),
    1,
    TIMEOUT_MS_MAX,
  );
  const serviceName = get('OTEL_SERVICE_NAME');
  return {
    tracesUrl,
    protocol,
    headers: {
      ...keyValues(get('OTEL_EXPORTER_OTLP_HEADERS'), 'OTEL_EXPORTER_OTLP_HEADERS'),
      ...keyValues(get('OTEL_EXPORTER_OTLP_TRACES_HEADERS'), 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'),
    },
    exportTimeoutMs,
    serviceName,
    resourceAttributes: keyValues(get('OTEL_RESOURCE_ATTRIBUTES'), 'OTEL_RESOURCE_ATTRIBUTES'),
    sampler,
    samplerRatio,
    batch,
  };
}

function httpUrl(text: string, name: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`${name} must be an http:// or https:// URL, not "${text}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`${name} must be an http:// or https:// URL, not "${text}"`);
  if (url.search !== '' || url.hash !== '')
    throw new Error(`${name} must be a URL without a query or fragment`);
  return url.href;
}

/** The W3C Baggage-like list the specification gives these variables: `key=value,key=value`, values percent-encoded. */
function keyValues(text: string | undefined, name: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  if (text === undefined) return pairs;
  for (const entry of text.split(',')) {
    const eq = entry.indexOf('=');
    const key = entry.slice(0, eq).trim();
    let value: string;
    try {
      value = decodeURIComponent(entry.slice(eq + 1).trim());
    } catch {
      value = '\u0000';
    }
    // Only printable ASCII keys, and values a header or an attribute can hold.
    if (eq <= 0 || !/^[!#-+\--~]+$/.test(key) || /[\u0000-\u001f\u007f]/.test(value))
      throw new Error(
        `${name} must be key=value pairs separated by commas (values percent-encoded); "${entry.trim()}" is not one`,
      );
    pairs[key] = value;
  }
  return pairs;
}

type EnvReader = (name: string) => string | undefined;

/** OTEL_TRACES_SAMPLER and its argument, checked. */
function readSampler(get: EnvReader): { sampler: SamplerName; samplerRatio: number } {
  const sampler = get('OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on';
  if (!(SAMPLERS as readonly string[]).includes(sampler))
    throw new Error(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}, not "${sampler}"`);
  const ratioText = get('OTEL_TRACES_SAMPLER_ARG');
  const samplerRatio =
    ratioText === undefined || !sampler.endsWith('traceidratio') ? 1 : Number(ratioText);
  if (
    !(samplerRatio >= 0 && samplerRatio <= 1) ||
    (ratioText !== undefined && !/^\d*\.?\d+$/.test(ratioText))
  ) {
    throw new Error(
      `OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, not "${ratioText ?? ''}"`,
    );
  }
  return { sampler: sampler as SamplerName, samplerRatio };
}

/** A whole-number variable within bounds, or its default. */
function wholeOf(
  get: EnvReader,
): (name: string, fallback: number, min: number, max: number) => number {
  return (name: string, fallback: number, min: number, max: number): number => {
    const text = get(name);
    if (text === undefined) return fallback;
    const value = /^\d{1,9}$/.test(text) ? Number(text) : NaN;
    if (!(value >= min && value <= max))
      throw new Error(`${name} must be a whole number from ${min} to ${max}, not "${text}"`);
    return value;
  };
}

/** The batch span processor's OTEL_BSP_* variables, checked. */
function readBatch(whole: ReturnType<typeof wholeOf>): TracingConfig['batch'] {
  const maxQueueSize = whole(
    'OTEL_BSP_MAX_QUEUE_SIZE',
    BSP_DEFAULTS.maxQueueSize,
    1,
    MAX_QUEUE_SIZE_MAX,
  );
  return {
    scheduledDelayMs: whole(
      'OTEL_BSP_SCHEDULE_DELAY',
      BSP_DEFAULTS.scheduledDelayMs,
      0,
      TIMEOUT_MS_MAX,
    ),
    exportTimeoutMs: whole(
      'OTEL_BSP_EXPORT_TIMEOUT',
      BSP_DEFAULTS.exportTimeoutMs,
      1,
      TIMEOUT_MS_MAX,
    ),
    maxQueueSize,
    maxExportBatchSize: whole(
      'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
      Math.min(BSP_DEFAULTS.maxExportBatchSize, maxQueueSize),
      1,
      maxQueueSize,
    ),
  };
}
