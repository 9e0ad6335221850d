// The request pipeline's one shape (docs/internals/pipeline.md): an ordered list of stages, each
// one module, which the handler (app.ts) folds over. A stage says
//
// - what it reads from the request and may answer: `enter(call)` runs in list order before the
//   route's handler. It returns nothing to let the request go on; throws (or returns a promise
//   that rejects with) the error to answer with; returns a promise the request waits for before
//   the next stage (resolving with nothing) or answers with what it resolves with; returns an
//   reply to respond with at once (a preflight's Reply, a 422); or returns a Hold: the
//   next stages run now, and the response waits for the held decision (a refusal replaces it).
// - what it adds to every response: headers it pushes with `addHeaders(call, …)` while it enters
//   (CORS, RateLimit); every response the call gets from then on carries them, errors included.
// - what it watches: `waits(call, pipeline)` when the handler starts waiting (a promise) and
//   `settles(call)` when it settles; `pipeline.fail(call, error)` answers the call early (a
//   deadline's 504).
// - what the work behind the handler is done for: the call's `work` (src/common/work.ts), which
//   the handler hands to its store calls; a stage that bounds or traces that work (the deadline,
//   tracing) sets it in its enter.
// - when the call is over: `finished(call, status)`, once its response went out (a span's end).
// - what it declares in the documents: `docs` (openapi.ts reads it for each operation): the
//   headers it adds to answers, the request headers it reads, and the errors it may answer.
//
// No stage calls another: what one needs from an earlier one it reads on the call (the matched
// route, the decoded input, a keyed write's ticket). Adding a stage (tracing, say) is its module
// and one line in the list (server.ts builds it from the options).
import type { IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http';
import type { Work } from '../../common/work.js';
import type { InvalidRequest } from '../errors.js';
import type { Reply, Route, RouteInput } from '../route.js';
import type { RequestTrace } from '../../features/tracing/request-trace.js';

/** A response's headers as node:http's flat list: name, value, name, value… */
export type HeaderList = OutgoingHttpHeader[];

/** One request on its way through the stages: what they read, and what its response needs. */
export interface Call {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** req.method and req.url, which a request from node:http always has. */
  readonly method: string;
  readonly url: string;
  /** The request id (request-id.ts), on every response as X-Request-Id. */
  readonly id: string;
  readonly startedMs: number;
  /** The matched route's template, or UNMATCHED_ROUTE (request-metrics.ts) until routing matched one. */
  route: string;
  /** The matched route and its placeholders' values, once routing matched (route-stages.ts). */
  matched: Route | undefined;
  values: readonly string[] | undefined;
  /** The validated input and the body's bytes, once the input stage has read them. */
  input: RouteInput<Record<string, unknown>, unknown> | undefined;
  body: Buffer | undefined;
  /** A keyed write allowed to run (idempotency.ts), once the Idempotency-Key stage found no replay. */
  keyed: unknown;
  /** Headers the stages add to every response (CORS, RateLimit); undefined while none has. */
  headers: HeaderList | undefined;
  /** A decision the response waits for (a Hold). */
  held: Promise<void> | undefined;
  /** Set by stages that watch the handler's wait (a deadline's timer, the shedder's count). */
  timer: NodeJS.Timeout | undefined;
  waiting: boolean;
  /**
   * What the work behind the handler is done for, handed to its store calls: its deadline and its
   * origin (UNBOUNDED_WORK until a stage sets them: the deadline stage, the tracing stage).
   */
  work: Work;
  /**
   * The call's recorded span, set by the tracing stage (tracing.ts) when it samples the call: its
   * ids go on the call's log lines (access and error). Undefined with tracing off or sampled out.
   */
  trace: RequestTrace | undefined;
  /** The error code the call was answered with (its class, for a failure of ours), for finished(). */
  errorType: string | undefined;
  /** The response, once there is one (status 0 until then), kept until it is written at the end of the turn. */
  status: number;
  responseHeaders: HeaderList | undefined;
  responseBody: string | Buffer | undefined;
  bytes: number;
}

/** The next stages run now; the response waits for `decided`, and a rejection is answered instead. */
export class Hold {
  constructor(readonly decided: Promise<void>) {}
}

/** What a request is answered with: a reply, or the validation failure to render (not thrown: cheaper). */
export type StageReply = Reply | InvalidRequest;

export type Entered = undefined | StageReply | Hold | Promise<StageReply | undefined | void>;

/** What the pipeline lends a stage that watches a wait. */
export interface Pipeline {
  /** Answers the call with the error now, unless it has a response. */
  fail(call: Call, error: unknown): void;
}

/** A header as the documents show it. */
export interface HeaderDoc {
  readonly description: string;
  readonly required?: boolean;
  readonly example?: string;
}

/** What a stage declares in the documents, for one operation (undefined: nothing for it). */
export interface StageDocs {
  /** Headers the stage adds to the operation's answers, for the rows whose key `rows` accepts. */
  readonly responseHeaders?: (route: Route) =>
    | {
        readonly headers: Readonly<Record<string, HeaderDoc>>;
        readonly rows: (key: string) => boolean;
      }
    | undefined;
  /** Request headers the stage reads on the operation. */
  readonly requestHeaders?: (route: Route) => readonly RequestHeaderDoc[];
  /** Errors the stage may answer on the operation, as representative instances. */
  readonly errors?: (route: Route) => readonly Error[];
}

export interface RequestHeaderDoc {
  readonly name: string;
  readonly description: string;
  readonly required: boolean;
  readonly schema: Readonly<Record<string, unknown>>;
  readonly example?: string;
}

export interface Stage {
  readonly name: string;
  readonly enter?: (call: Call) => Entered;
  readonly waits?: (call: Call, pipeline: Pipeline) => void;
  readonly settles?: (call: Call) => void;
  /**
   * Told once the call's response went out (or its client left: 499), with the status reported,
   * just before the access line: where a tracing stage ends its span. It must not throw.
   */
  readonly finished?: (call: Call, status: number) => void;
  readonly docs?: StageDocs;
}

/**
 * Adds headers to every response of the call. The list becomes the call's when it has none yet (no
 * copy on the hot path): pass one made for this call, never a shared constant.
 */
export function addHeaders(call: Call, headers: HeaderList): void {
  const list = call.headers;
  if (list === undefined) call.headers = headers;
  else for (const header of headers) list.push(header);
}

/** The terminal of the fold: the matched route's handler, given the call. */
export type Handler = (call: Call) => Reply | Promise<Reply>;

/** The stages and the handler they lead to: the whole pipeline, as pipelineStages() builds it. */
export interface PipelineDefinition {
  readonly stages: readonly Stage[];
  readonly handler: Handler;
}
