// The CORS stage (stage.ts), first but for tracing (features.ts): a preflight from an allowed
// origin is answered 204 at once; any other request's responses carry the policy's headers, its
// errors and the parser's own responses included (cors.ts says what each is).
import { headerInRawRequest } from '../../http/connections/parser-responses.js';
import { addHeaders, type Call, type Entered, type PlacedStage } from '../../http/stages/stage.js';
import { corsHeaders, pairs, preflightHeaders, type CorsPolicy } from './cors.js';
import { corsDocs } from './docs.js';

export function corsStage(policy: CorsPolicy): PlacedStage {
  return {
    name: 'cors',
    place: 'request',
    enter(call: Call): Entered {
      const { req } = call;
      const origin = req.headers.origin;
      if (call.method === 'OPTIONS') {
        const preflight = preflightHeaders(
          policy,
          origin,
          req.headers['access-control-request-method'],
        );
        if (preflight !== undefined)
          return { status: 204, headers: Object.fromEntries(pairs(preflight)) };
      }
      // corsHeaders makes a list for each call: the response's headers take it as it is.
      addHeaders(call, corsHeaders(policy, origin));
      return undefined;
    },
    // A request the parser could not read is answered by the parser (parser-responses.ts), with the
    // CORS headers of the Origin its bytes hold.
    parserHeaders: (headers, raw) =>
      corsHeaders(policy, headers?.origin ?? headerInRawRequest(raw, 'origin')),
    docs: corsDocs,
  };
}
