// A service whose routes fail on purpose (a 503 and an unhandled 500) and which is never ready,
// so that what the server does with such answers (ids, logs) can be looked at.
import { serviceUnavailable } from '../../src/http/errors.js';
import { defineRoute } from '../../src/http/route.js';
import type { ServiceDefinition } from '../../src/http/service.js';
import { createLogger } from '../../src/observe/log.js';
import { startServer } from '../../src/server.js';

export const FAILURE_TEXT = 'secret internals';

const faulty: ServiceDefinition = {
  title: 'Faulty',
  version: '0',
  routes: [
    defineRoute({
      method: 'GET',
      path: '/unavailable',
      status: 200,
      params: {},
      docs: { name: 'unavailable', succeeds: false },
      handle: () => {
        throw serviceUnavailable();
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/boom',
      status: 200,
      params: {},
      docs: { name: 'boom', succeeds: false },
      handle: () => {
        throw new Error(FAILURE_TEXT);
      },
    }),
  ],
  components: {},
  ready: () => Promise.resolve(false),
  close: () => Promise.resolve(),
};

/** Runs `body` against the faulty service, its log lines collected at info. */
export async function withFaultyService(
  options: { readonly accessLog?: boolean },
  body: (url: string, logs: string[]) => Promise<void>,
): Promise<void> {
  const logs: string[] = [];
  const server = await startServer(faulty, {
    host: '127.0.0.1',
    port: 0,
    errorFormat: { name: 'default', catchAll: false },
    service: 'faulty',
    log: createLogger('info', (line) => logs.push(line)).child({ service: 'faulty' }),
    accessLog: options.accessLog,
  });
  try {
    await body(server.url, logs);
  } finally {
    await server.close();
  }
}
