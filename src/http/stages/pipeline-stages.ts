// The pipeline of a service: the route's own stages (route-stages.ts) with the features' stages
// around them, each where its `place` says, in the order the features are listed
// (src/features/features.ts says which there are, and why in that order):
//
//   the features' `request` stages   before routing: they see every request
//   routing                          404, 405, 307; the matched route
//   the features' `route` stages     the route is known, its input not read
//   input                            path parameters and body: 400, 413, 422
//   the features' `input` stages     the input is read
//   → the handler (or what a stage put in its place), then the response (responses.ts)
//
// The request id is no stage: every response, a parser's too, carries one (request-id.ts).
import type { BodyLimits } from '../body.js';
import type { ErrorFormat } from '../render.js';
import type { Route } from '../route.js';
import { Router } from '../routing.js';
import { inputStage, routeHandler, routingStage } from './route-stages.js';
import type { PipelineDefinition, PlacedStage, Place } from './stage.js';

export interface PipelineOptions {
  readonly routes: readonly Route[];
  readonly errorFormat: ErrorFormat;
  readonly limits: BodyLimits;
  /** The features' stages, in the order of the list. */
  readonly stages: readonly PlacedStage[];
}

export function pipelineStages(options: PipelineOptions): PipelineDefinition {
  const at = (place: Place): PlacedStage[] =>
    options.stages.filter((stage) => stage.place === place);
  const router = new Router(options.routes);
  return {
    stages: [
      ...at('request'),
      routingStage(router, options.errorFormat),
      ...at('route'),
      inputStage(options.limits),
      ...at('input'),
    ],
    handler: routeHandler,
    templateOf: (target) => router.templateOf(target),
  };
}
