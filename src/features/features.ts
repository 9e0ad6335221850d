// The features, in the order their stages stand in the pipeline within each place (stage.ts
// `Place`): a feature is its folder and its line here (docs/internals/pipeline.md).
//
//   request   tracing        a span per request, ended with its response       (--otel-endpoint)
//             cors           headers on every response, the preflight's 204    (--cors-origin)
//             cross-origin   403 for a cross-site write, before any work       (on; --cross-origin-protection)
//   routing   (the route's own: 404, 405, 307; the matched route)
//   route     lifecycle      Deprecation, Sunset; 410 from the sunset on        (--deprecate)
//             shedding       503 before any work of the route                   (--shed-*)
//             rate-limits    429 and the RateLimit fields; keyed writes wait   (--rate-limit)
//   input     (the route's own: path parameters and body: 400, 413, 422)
//             idempotency    an Idempotency-Key's replay, or its own errors     (always)
//             rate-limits    a keyed write that found no replay                 (--rate-limit)
//             deadlines      504 for a handler still waiting                    (--deadline-ms)
//   → the handler: conditions (304, 412, 428) and the store; then the response
//
// Tracing stands first, so that it sees every request and every response; idempotency before the
// rate limits, so that a replay is answered whatever the limit.
import { cors } from './cors/feature.js';
import { crossOrigin } from './cross-origin/feature.js';
import { deadlines } from './deadlines/feature.js';
import type { Feature } from './feature.js';
import { idempotency } from './idempotency/feature.js';
import { lifecycle } from './lifecycle/feature.js';
import { rateLimits } from './rate-limits/feature.js';
import { shedding } from './shedding/feature.js';
import { tracing } from './tracing/feature.js';

export const FEATURES: readonly Feature<unknown>[] = [
  tracing,
  cors,
  crossOrigin,
  lifecycle,
  shedding,
  idempotency,
  rateLimits,
  deadlines,
];
