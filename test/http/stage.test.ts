// The stage shape (src/http/stages/stage.ts), as a new stage meets it: added to the list, it runs
// before the route, its headers are on every answer (errors too), it may answer in the route's
// place, and it is told each answer's status once it went out, as a tracing stage needs.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { createRequestHandler } from '../../src/http/app.js';
import { ApiError } from '../../src/http/errors.js';
import { pipelineStages } from '../../src/http/stages/pipeline-stages.js';
import { defineRoute } from '../../src/http/route.js';
import { RequestObserver } from '../../src/http/request-observer.js';
import { addHeaders, type Stage } from '../../src/http/stages/stage.js';
import { createLogger } from '../../src/observe/log.js';
import { send } from '../support/http.js';

test('a stage added to the list runs before the route, adds its header to every answer, may answer, and is told each status', async () => {
  const seen: string[] = [];
  const tracing: Stage = {
    name: 'tracing',
    enter(call) {
      seen.push(`enter ${call.method} ${call.url}`);
      addHeaders(call, ['Traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01']);
      if (call.req.headers['x-refuse'] !== undefined) throw new ApiError('HTTP_503');
      return undefined;
    },
    finished(call, status) {
      seen.push(`finished ${call.url} ${status}`);
    },
  };
  const log = createLogger('silent');
  const routes = [
    defineRoute({
      method: 'GET',
      path: '/x',
      status: 200,
      params: {},
      docs: { name: 'x' },
      handle: () => ({ status: 200, body: '{}' }),
    }),
  ];
  const errorFormat = { name: 'default', catchAll: false } as const;
  const limits = { bodyBytesMax: 1024, nestingDepthMax: 8 };
  const base = pipelineStages({ routes, errorFormat, limits, stages: [] });
  const handler = createRequestHandler({
    errorFormat,
    log,
    observer: new RequestObserver({ log, accessLog: false }),
    shutdown: { started: false },
    pipeline: { stages: [tracing, ...base.stages], handler: base.handler },
  });
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const ok = await send(url, { method: 'GET', path: '/x' });
    const missing = await send(url, { method: 'GET', path: '/nowhere' });
    const refused = await send(url, { method: 'GET', path: '/x', headers: [['X-Refuse', '1']] });
    assert.deepEqual([ok.status, missing.status, refused.status], [200, 404, 503]);
    for (const res of [ok, missing, refused])
      assert.equal(
        res.headers.traceparent,
        '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      );
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(seen, [
      'enter GET /x',
      'finished /x 200',
      'enter GET /nowhere',
      'finished /nowhere 404',
      'enter GET /x',
      'finished /x 503',
    ]);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
