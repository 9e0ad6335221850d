// Tracing's settings, read from the OpenTelemetry SDK's standard environment variables (and the
// --otel-endpoint option) once, at start, by src/config.ts. Nothing here loads the SDK: tracing is
// off unless an OTLP endpoint is named, and then src/features/tracing/tracing.ts loads it.
//
// The variables are often set for a whole fleet, so a value this service cannot use never stops
// it: as the SDK's specification asks, an invalid or unsupported value is ignored, and one warning
// says which variable and what is used instead (its default, or the nearest value that works).
// Only the project's own option, --otel-endpoint, is refused at start.
import { readKnownMethods, readPropagators, type Propagators } from './propagation-options.js';
import { listOf, SettingsReader, type SettingWarning } from './settings-reader.js';

export type { SettingWarning };

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
  /** What a request's context is read from (OTEL_PROPAGATORS). */
  readonly propagators: Propagators;
  /** The HTTP methods spans name as they are (OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS); any other is _OTHER. */
  readonly knownMethods: ReadonlySet<string>;
}

export interface TracingSettings {
  /** Undefined when tracing is off. */
  readonly tracing: TracingConfig | undefined;
  /** One per variable whose value was ignored, in the order read. */
  readonly warnings: readonly SettingWarning[];
}

/** The defaults of the specification (OTEL_BSP_*, OTEL_EXPORTER_OTLP_TIMEOUT). */
const BSP_DEFAULTS = {
  scheduledDelayMs: 5000,
  exportTimeoutMs: 30_000,
  maxQueueSize: 2048,
  maxExportBatchSize: 512,
};
const EXPORT_TIMEOUT_MS_DEFAULT = 10_000;
/** Past this many spans queued, the queue alone would hold tens of megabytes: the most used. */
export const MAX_QUEUE_SIZE_MAX = 65_536;
/** A minute: longer limits only hold more spans in memory while a collector is away. */
const TIMEOUT_MS_MAX = 60_000;
const DEFAULT_SAMPLER: SamplerName = 'parentbased_always_on';

/**
 * The settings: tracing undefined when it is off (no endpoint named, OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none), and a warning for each value ignored. Throws an Error whose message
 * is the one line to print only for a malformed --otel-endpoint.
 */
export function readTracingConfig(
  endpointOption: string | undefined,
  env: NodeJS.ProcessEnv,
): TracingSettings {
  const read = new SettingsReader(env);
  const option = endpointOption === undefined ? undefined : httpUrl(endpointOption);
  if (option === null)
    throw new Error(`--otel-endpoint must be an http:// or https:// URL, not "${endpointOption}"`);
  const disabled = readDisabled(read);
  const exporting = readExporter(read);
  const tracesUrl = option !== undefined ? `${option}/v1/traces` : readEndpoint(read);
  if (disabled || !exporting || tracesUrl === undefined)
    return { tracing: undefined, warnings: read.warnings };
  const { sampler, samplerRatio } = readSampler(read);
  const exportTimeoutMs = read.whole(
    'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT',
    read.whole('OTEL_EXPORTER_OTLP_TIMEOUT', EXPORT_TIMEOUT_MS_DEFAULT, 1, TIMEOUT_MS_MAX),
    1,
    TIMEOUT_MS_MAX,
  );
  const tracing: TracingConfig = {
    tracesUrl,
    protocol: readProtocol(read),
    headers: {
      ...keyValues(read, 'OTEL_EXPORTER_OTLP_HEADERS', HEADER_FIELDS),
      ...keyValues(read, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', HEADER_FIELDS),
    },
    exportTimeoutMs,
    serviceName: read.get('OTEL_SERVICE_NAME'),
    resourceAttributes: keyValues(read, 'OTEL_RESOURCE_ATTRIBUTES', ATTRIBUTES),
    sampler,
    samplerRatio,
    batch: readBatch(read),
    propagators: readPropagators(read),
    knownMethods: readKnownMethods(read),
  };
  return { tracing, warnings: read.warnings };
}

/** OTEL_SDK_DISABLED: only a true value (any case) disables; anything but true or false is warned of. */
function readDisabled(read: SettingsReader): boolean {
  const text = read.get('OTEL_SDK_DISABLED');
  if (text === undefined) return false;
  const value = text.toLowerCase();
  if (value !== 'true' && value !== 'false')
    read.warn('OTEL_SDK_DISABLED', `"${text}" is neither true nor false: false used instead`);
  return value === 'true';
}

/** OTEL_TRACES_EXPORTER: otlp (the default) or none; any other exporter is warned of, and otlp used. */
function readExporter(read: SettingsReader): boolean {
  const text = read.get('OTEL_TRACES_EXPORTER');
  if (text === undefined) return true;
  const names = listOf(text);
  const unsupported = names.filter((name) => name !== 'otlp' && name !== 'none');
  if (names.includes('otlp') || !names.includes('none')) {
    if (unsupported.length > 0)
      read.warn(
        'OTEL_TRACES_EXPORTER',
        `${unsupported.map((name) => `"${name}"`).join(', ')} ${unsupported.length === 1 ? 'is' : 'are'} not supported (otlp and none are): otlp used instead`,
      );
    return true;
  }
  if (unsupported.length > 0)
    read.warn(
      'OTEL_TRACES_EXPORTER',
      `${unsupported.map((name) => `"${name}"`).join(', ')} ${unsupported.length === 1 ? 'is' : 'are'} not supported (otlp and none are): ignored, none used`,
    );
  return false;
}

/** A URL may hold a credential: the warning does not repeat it. */
const NOT_A_URL =
  'not an http:// or https:// URL without a query (its value is not logged): ignored';

/** The traces URL the variables name, if any: the traces endpoint as it is, else the base endpoint's /v1/traces. */
function readEndpoint(read: SettingsReader): string | undefined {
  const traces = read.get('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  if (traces !== undefined) {
    const url = httpUrl(traces, true);
    if (url !== null) return url;
    read.warn('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', NOT_A_URL);
  }
  const base = read.get('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (base === undefined) return undefined;
  const url = httpUrl(base);
  if (url !== null) return `${url}/v1/traces`;
  read.warn('OTEL_EXPORTER_OTLP_ENDPOINT', NOT_A_URL);
  return undefined;
}

/** An http(s) URL without query or fragment: as it is (`whole`), or without its trailing slash; null when it is not one. */
function httpUrl(text: string, whole = false): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.search !== '' || url.hash !== '') return null;
  return whole ? url.href : url.href.replace(/\/$/, '');
}

function readProtocol(read: SettingsReader): OtlpProtocol {
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const text = read.get(name);
    if (text === undefined) continue;
    const value = text.toLowerCase();
    if (value === 'http/protobuf' || value === 'http/json') return value;
    read.warn(
      name,
      `"${text}" is not supported (http/protobuf and http/json are): ${name === 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' ? 'OTEL_EXPORTER_OTLP_PROTOCOL, or else ' : ''}http/protobuf used instead`,
    );
  }
  return 'http/protobuf';
}

/** What a key=value list's entries may hold: its keys, and the characters its values may not hold. */
interface PairRule {
  readonly key: RegExp;
  readonly badValue: RegExp;
}

/** Resource attributes: printable ASCII keys, values without control characters. */
const ATTRIBUTES: PairRule = { key: /^[!#-+\--~]+$/, badValue: /[\u0000-\u001f\u007f]/ };

/**
 * Request headers: a field name is a token and a value is Latin-1 text without control characters
 * (RFC 9110 §5.1, §5.5), as node:http checks them; anything else would fail every export.
 */
const HEADER_FIELDS: PairRule = {
  key: /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/,
  badValue: /[\u0000-\u001f\u007f\u0100-\uffff]/,
};

/**
 * The W3C Baggage-like list the specification gives these variables: `key=value,key=value`, values
 * percent-encoded. A malformed one is discarded whole, as the specification asks of
 * OTEL_RESOURCE_ATTRIBUTES.
 */
function keyValues(read: SettingsReader, name: string, rule: PairRule): Record<string, string> {
  const text = read.get(name);
  const pairs: Record<string, string> = {};
  if (text === undefined) return pairs;
  for (const [index, entry] of text.split(',').entries()) {
    const eq = entry.indexOf('=');
    const key = entry.slice(0, eq).trim();
    let value: string;
    try {
      value = decodeURIComponent(entry.slice(eq + 1).trim());
    } catch {
      value = '\u0000';
    }
    if (eq <= 0 || !rule.key.test(key) || rule.badValue.test(value)) {
      // A header may be a credential: the warning says which entry, not what it holds.
      read.warn(
        name,
        `entry ${index + 1} is not key=value (values percent-encoded; the entry is not logged): the whole variable ignored`,
      );
      return {};
    }
    pairs[key] = value;
  }
  return pairs;
}

/** OTEL_TRACES_SAMPLER (case-insensitive) and its argument. */
function readSampler(read: SettingsReader): { sampler: SamplerName; samplerRatio: number } {
  const text = read.get('OTEL_TRACES_SAMPLER');
  let sampler = DEFAULT_SAMPLER;
  if (text !== undefined) {
    const value = text.toLowerCase();
    if ((SAMPLERS as readonly string[]).includes(value)) sampler = value as SamplerName;
    else
      read.warn(
        'OTEL_TRACES_SAMPLER',
        `"${text}" is not supported (${SAMPLERS.join(', ')} are): ${DEFAULT_SAMPLER} used instead`,
      );
  }
  const ratioText = read.get('OTEL_TRACES_SAMPLER_ARG');
  // The argument belongs to the ratio samplers; the others ignore it, as the specification says.
  if (ratioText === undefined || !sampler.endsWith('traceidratio'))
    return { sampler, samplerRatio: 1 };
  const ratio = /^(\d+\.?\d*|\.\d+)$/.test(ratioText) ? Number(ratioText) : NaN;
  if (ratio >= 0 && ratio <= 1) return { sampler, samplerRatio: ratio };
  read.warn(
    'OTEL_TRACES_SAMPLER_ARG',
    `"${ratioText}" is not a number from 0 to 1: the default, 1.0, used instead`,
  );
  return { sampler, samplerRatio: 1 };
}

/** The batch span processor's OTEL_BSP_* variables. */
function readBatch(read: SettingsReader): TracingConfig['batch'] {
  const maxQueueSize = read.whole(
    'OTEL_BSP_MAX_QUEUE_SIZE',
    BSP_DEFAULTS.maxQueueSize,
    1,
    MAX_QUEUE_SIZE_MAX,
  );
  const scheduledDelayMs = read.whole(
    'OTEL_BSP_SCHEDULE_DELAY',
    BSP_DEFAULTS.scheduledDelayMs,
    0,
    TIMEOUT_MS_MAX,
  );
  const exportTimeoutMs = read.whole(
    'OTEL_BSP_EXPORT_TIMEOUT',
    BSP_DEFAULTS.exportTimeoutMs,
    1,
    TIMEOUT_MS_MAX,
  );
  // The batch must fit the queue: a larger one is the queue's size, as the SDK's own reading does.
  const maxExportBatchSize = read.whole(
    'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
    Math.min(BSP_DEFAULTS.maxExportBatchSize, maxQueueSize),
    1,
    maxQueueSize,
    `the queue's size (OTEL_BSP_MAX_QUEUE_SIZE), ${maxQueueSize}`,
  );
  return { scheduledDelayMs, exportTimeoutMs, maxQueueSize, maxExportBatchSize };
}
