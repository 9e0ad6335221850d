// The bare node:http server (baseline.ts) traced the way the OpenTelemetry project documents for
// Node: its own auto-instrumentation of node:http (@opentelemetry/instrumentation-http) under the
// Node tracer provider (@opentelemetry/sdk-trace-node), every request sampled, spans batched and
// exported over OTLP/HTTP protobuf. The ruler for what our tracing adds: the same job, traced by
// the usual means (bench/instruction-count.ts).
//   node baseline-traced.js --otlp URL …the options of baseline.js
import { createRequire } from 'node:module';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

// Taken out of the arguments before baseline.js reads them.
const at = process.argv.indexOf('--otlp');
if (at === -1 || process.argv[at + 1] === undefined)
  throw new Error('baseline-traced.js needs --otlp URL');
const endpoint = process.argv[at + 1] as string;
process.argv.splice(at, 2);

const provider = new NodeTracerProvider({
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }))],
});
provider.register();
registerInstrumentations({ instrumentations: [new HttpInstrumentation()] });
// The instrumentation patches node:http as it is required: the server's prototype it patches is
// the one baseline.js's import of node:http uses too.
createRequire(import.meta.url)('node:http');
await import('./baseline.js');
