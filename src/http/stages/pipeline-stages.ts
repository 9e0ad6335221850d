// The list: which stages a service's pipeline has, in which order, from its options (stage.ts says
// what a stage is). Each is there only when its feature is on, so that a feature off costs a
// request nothing. The order is the contract's:
//
//   tracing         a span per request, ended with its response              (--otel-endpoint)
//   cors            headers on every response, the preflight's 204          (--cors-origin)
//   cross-origin    403 for a cross-site write, before any work            (--cors-origin, --cross-origin-protection)
//   routing         404, 405, 307; the matched route
//   shedding        503 before any work of the route                       (--shed-*)
//   rate-limit      429 and the RateLimit fields; keyed writes wait        (--rate-limit)
//   input           path parameters and body: 400, 413, 422
//   idempotency     an Idempotency-Key's replay, or its own errors
//   rate-limit      a keyed write that found no replay                      (--rate-limit)
//   deadline        504 for a handler still waiting                        (--deadline-ms)
//   → the handler: conditions (304, 412, 428) and the store; then the response (responses.ts)
//
// The request id is no stage: every response, a parser's too, carries one (request-id.ts). The
// tracing stage stands first, so that it sees every request and every response.
import type { BodyLimits } from '../body.js';
import { corsStage, type CorsPolicy } from '../../features/cors/cors.js';
import {
  crossOriginStage,
  type CrossOriginPolicy,
} from '../../features/cross-origin/cross-origin.js';
import { deadlineStage } from '../../features/deadlines/deadline.js';
import {
  DEFAULT_IDEMPOTENCY_TTL_MS,
  IdempotencyGate,
  type IdempotencyPolicy,
} from '../../features/idempotency/gate.js';
import { sheddingStage, type LoadShedder } from '../../features/shedding/load-shedding.js';
import type { RateLimitGate } from '../../features/rate-limits/gate.js';
import { rateLimitStage } from '../../features/rate-limits/stage.js';
import type { RateLimits } from '../../rate-limits/policy.js';
import type { ErrorFormat } from '../render.js';
import type { Route } from '../route.js';
import { idempotencyStage, inputStage, routeHandler, routingStage } from './route-stages.js';
import type { PipelineDefinition, Stage } from './stage.js';
import { tracingStage } from '../../features/tracing/stage.js';
import type { RequestTracer } from '../../features/tracing/request-trace.js';

export interface PipelineOptions {
  readonly routes: readonly Route[];
  readonly errorFormat: ErrorFormat;
  readonly limits: BodyLimits;
  readonly idempotency?: IdempotencyPolicy;
  readonly cors?: CorsPolicy;
  readonly crossOrigin?: CrossOriginPolicy;
  readonly deadlineMs?: number;
  readonly shedding?: LoadShedder;
  /** The gate, and the limits it holds (for the documents). */
  readonly rateLimitGate?: RateLimitGate;
  readonly rateLimitPolicy?: RateLimits;
  /** A span per request (src/telemetry/); none: tracing off, and no tracing stage. */
  readonly tracer?: RequestTracer;
}

export function pipelineStages(options: PipelineOptions): PipelineDefinition {
  const gate = new IdempotencyGate(
    options.idempotency ?? { required: false, ttlMs: DEFAULT_IDEMPOTENCY_TTL_MS },
  );
  const { cors, crossOrigin, shedding, rateLimitGate, tracer } = options;
  const limits = options.rateLimitPolicy ?? {};
  const stages: (Stage | undefined)[] = [
    tracer === undefined ? undefined : tracingStage(tracer),
    cors === undefined ? undefined : corsStage(cors),
    crossOrigin === undefined ? undefined : crossOriginStage(crossOrigin),
    routingStage(options.routes, options.errorFormat),
    shedding === undefined ? undefined : sheddingStage(shedding),
    rateLimitGate === undefined ? undefined : rateLimitStage(rateLimitGate, limits, 'unkeyed'),
    inputStage(options.limits),
    idempotencyStage(gate),
    rateLimitGate === undefined ? undefined : rateLimitStage(rateLimitGate, limits, 'keyed'),
    (options.deadlineMs ?? 0) > 0 ? deadlineStage(options.deadlineMs as number) : undefined,
  ];
  return {
    stages: stages.filter((stage): stage is Stage => stage !== undefined),
    handler: routeHandler(gate),
  };
}
