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
// - what the call runs instead of its route's handler: a stage may set `call.handler` (a keyed
//   write, run under its key).
// - what it keeps of the call: a `Slot` it declares holds its state on the call (a timer, a span),
//   so that the call names no feature.
// - what it adds to the call's log lines: `logs(call)` (a span's ids).
// - what it adds to the parser's own responses: `parserHeaders(headers, raw)` (CORS; for a request
//   the parser could not read, only its bytes are known).
// - when the call is over: `finished(call, status)`, once its response went out (a span's end).
// - what it declares in the documents: `docs` (openapi.ts reads nothing else of a feature): the
//   headers it adds to responses, the request headers it reads, the errors it may answer, its
//   rows, its marks on an operation and the operations it answers itself.
//
// No stage calls another: what one needs from an earlier one it reads on the call (the matched
// route, the decoded input) or in the other's slot (a keyed write's ticket). Adding a feature is
// its module and one line in the list (src/features/features.ts).
import type {
  IncomingHttpHeaders,
  IncomingMessage,
  OutgoingHttpHeader,
  ServerResponse,
} from 'node:http';
import type { Work } from '../../common/work.js';
import type { InvalidRequest } from '../errors.js';
import type { Reply, Route, RouteInput } from '../route.js';

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
  /** What the call runs instead of its route's handler, when a stage set one (a keyed write). */
  handler: Handler | undefined;
  /** The stages' own state (Slot); undefined while none has any. */
  slots: unknown[] | undefined;
  /** Headers the stages add to every response (CORS, RateLimit); undefined while none has. */
  headers: HeaderList | undefined;
  /** A decision the response waits for (a Hold). */
  held: Promise<void> | undefined;
  /**
   * What the work behind the handler is done for, handed to its store calls: its deadline and its
   * origin (UNBOUNDED_WORK until a stage sets them: the deadline stage, the tracing stage).
   */
  work: Work;
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

/** A header as the documents describe it: once for the whole document, whatever rows carry it. */
export interface HeaderDoc {
  readonly description: string;
  /** The value's schema beyond `type: string` (an example, a constant). */
  readonly schema?: Readonly<Record<string, unknown>>;
}

/** Which of the headers a stage describes it adds to the operation's rows. */
export interface AddedHeaders {
  readonly names: readonly string[];
  /** The rows (`200`, `4XX`, `default`…) that carry them; every row when omitted. */
  readonly rows?: (key: string) => boolean;
  /** Carried by every response of those rows. */
  readonly required?: boolean;
}

/** A row of the stage's own on an operation: where its error is shown, and what the row means. */
export interface RowDoc {
  /** A status (`429`) or a range (`4XX`). */
  readonly key: string;
  readonly description: string;
  /** The row's own response, shown first; the other responses of its status are placed after. */
  readonly error?: Error;
}

/** What a stage declares in the documents, for one operation (undefined: nothing for it). */
export interface StageDocs {
  /** Each header the stage adds to responses, or its errors carry, described once. */
  readonly headers?: Readonly<Record<string, HeaderDoc>>;
  /** The headers it adds to the operation's responses. */
  readonly responseHeaders?: (route: Route) => readonly AddedHeaders[];
  /** Request headers the stage reads on the operation. */
  readonly requestHeaders?: (route: Route) => readonly RequestHeaderDoc[];
  /** Errors the stage may answer on the operation, as representative instances. */
  readonly errors?: (route: Route) => readonly Error[];
  /** Rows of its own on the operation (a 429, the key's 4XX). */
  readonly rows?: (route: Route) => readonly RowDoc[];
  /** Members it sets on the operation object (`deprecated: true`). */
  readonly operation?: (route: Route) => Readonly<Record<string, unknown>> | undefined;
  /**
   * Operations the stage answers itself on a path (a CORS preflight), given the path's routes, as
   * routes for the documents only: each is documented as the routes are, by the stages that stand
   * before routing.
   */
  readonly operations?: (path: string, routes: readonly Route[]) => readonly Route[];
}

export interface RequestHeaderDoc {
  readonly name: string;
  readonly description: string;
  readonly required: boolean;
  readonly schema: Readonly<Record<string, unknown>>;
  readonly example?: string;
}

/**
 * Where a feature's stage stands in the pipeline: before routing (it sees every request), after
 * routing (the route is known, its input not read yet), or after the input is read.
 */
export type Place = 'request' | 'route' | 'input';

export interface Stage {
  readonly name: string;
  /** A feature's stage: where it stands (the route's own stages are placed by the pipeline). */
  readonly place?: Place;
  readonly enter?: (call: Call) => Entered;
  readonly waits?: (call: Call, pipeline: Pipeline) => void;
  readonly settles?: (call: Call) => void;
  /**
   * Told once the call's response went out (or its client left: 499), with the status reported,
   * just before the access line: where a tracing stage ends its span. It must not throw.
   */
  readonly finished?: (call: Call, status: number) => void;
  /** Members the stage adds to the call's log lines, its access line and any error line. */
  readonly logs?: (call: Call) => LogMembers | undefined;
  /**
   * Headers the parser's own responses carry (parser-responses.ts), from the request's headers when
   * it read them, else from the bytes it could not read.
   */
  readonly parserHeaders?: (
    headers: IncomingHttpHeaders | undefined,
    raw: unknown,
  ) => HeaderList | undefined;
  readonly docs?: StageDocs;
}

/** What a stage adds to a call's log lines: as fields, and as the JSON members of the access line. */
export interface LogMembers {
  readonly fields: Readonly<Record<string, string>>;
  /** `,"name":"value"…`, written once, appended to the access line as it is (Logger.infoJson). */
  readonly json: string;
}

/**
 * A piece of a call's state that a stage declares for itself, as Hono's middlewares extend their
 * context's variable map: typed, and held by the call without the call naming it. Declared once,
 * at module level; a call makes room for its slots on the first one set.
 */
export class Slot<T> {
  private static declared = 0;
  readonly index = Slot.declared++;

  constructor(readonly name: string) {}

  get(call: Call): T | undefined {
    return call.slots?.[this.index] as T | undefined;
  }

  set(call: Call, value: T | undefined): void {
    (call.slots ??= [])[this.index] = value;
  }
}

/** A feature's stage, with its place. */
export type PlacedStage = Stage & { readonly place: Place };

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
  /**
   * The template of the path a request names, whatever its method, for the log and metrics of a
   * request answered before routing (a preflight, a refused cross-site write); undefined when no
   * route has that path.
   */
  readonly templateOf?: (target: string) => string | undefined;
}
