// Tracing as a feature (feature.ts): OpenTelemetry spans over OTLP/HTTP, off unless an endpoint is
// named (--otel-endpoint, or the standard OTEL_* variables, options.ts). The SDK is loaded only
// when tracing is on (tracing.ts), so that tracing off costs neither start-up nor requests. A
// service it joins gets a span per request (stage.ts), its store's batches as spans (the store's
// observer), and, once the service stopped, the last spans sent within a bounded time.
import { ConfigError } from '../../options.js';
import type { Feature } from '../feature.js';
import { readTracingConfig, type TracingConfig } from './options.js';
import { tracingStage } from './stage.js';

export const tracing: Feature<TracingConfig> = {
  name: 'tracing',
  options: [
    {
      name: 'otel-endpoint',
      variable: undefined,
      takes: 'value',
      usage: `--otel-endpoint URL  send OpenTelemetry traces over OTLP/HTTP to the collector at URL (spans go
                       to URL/v1/traces); the standard OTEL_EXPORTER_OTLP_* and OTEL_* variables
                       apply (OTEL_EXPORTER_OTLP_ENDPOINT, default none: tracing off)`,
    },
  ],
  configure(values) {
    let read: ReturnType<typeof readTracingConfig>;
    try {
      read = readTracingConfig(values.text('otel-endpoint'), values.env);
    } catch (error) {
      // Only the project's own option stops the start; a bad OTEL_* value is warned of.
      throw new ConfigError((error as Error).message);
    }
    for (const warning of read.warnings) values.warn(warning);
    return read.tracing;
  },
  async join(settings, service) {
    const { startTracing } = await import('./tracing.js');
    const started = startTracing(settings, {
      service: service.service,
      registry: service.metrics,
      log: service.log,
    });
    return {
      store: { observer: { batchStarted: started.batchStarted } },
      // The collector's URL is not said: it may hold a credential.
      said: { tracing: settings.protocol },
      stages: () => [tracingStage(started.requests)],
      close: () => started.shutdown(),
    };
  },
};
