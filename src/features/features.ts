// The features, in the order their stages stand within each place of the pipeline (stage.ts
// `Place`; docs/internals/pipeline.md has the whole table): a feature is its folder and its line
// here. Tracing stands first, so that it sees every request and every response; idempotency before
// the rate limits, so that a replay is answered whatever the limit.
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
