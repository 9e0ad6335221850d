// The peer: GET /todos/1 served by Fastify 5 as its documentation would have one written, doing the
// job our to-do service does for that request. Its pino logger is on and writes one line per
// request (Fastify's own "request completed" line; its "incoming request" line is left out through
// its LogController), to stdout with pino's default destination. Each request gets an id (an
// acceptable X-Request-Id is kept, as ours keeps it, else a random UUID), logged and sent back in
// X-Request-Id. The to-do is read from a SQLite file with better-sqlite3 (WAL, synchronous FULL,
// one prepared statement), and the answer is the same JSON our service sends.   node
// fastify-peer.js --port N --db FILE
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import Fastify, { LogController } from 'fastify';

const { values: args } = parseArgs({
  options: { port: { type: 'string', default: '0' }, db: { type: 'string', default: ':memory:' } },
});

const db = new Database(args.db);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec(
  'CREATE TABLE IF NOT EXISTS todos (id INTEGER PRIMARY KEY, title TEXT NOT NULL, done INTEGER NOT NULL)',
);
db.prepare("INSERT OR IGNORE INTO todos (id, title, done) VALUES (1, 'Buy milk', 0)").run();
const selectTodo = db.prepare<[number], { id: number; title: string; done: number }>(
  'SELECT id, title, done FROM todos WHERE id = ?',
);

/** Fastify's request logging, less its "incoming request" line: one line per request. */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}
}

const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const app = Fastify({
  logger: true,
  logController: new OneLinePerRequest(),
  requestIdHeader: false,
  genReqId: (req: IncomingMessage) => {
    const incoming = req.headers['x-request-id'];
    return typeof incoming === 'string' && ACCEPTABLE_ID.test(incoming) ? incoming : randomUUID();
  },
});

app.addHook('onRequest', (request, reply, done) => {
  void reply.header('x-request-id', request.id);
  done();
});

app.get<{ Params: { id: string } }>('/todos/:id', async (request, reply) => {
  const id = Number(request.params.id);
  const row = Number.isInteger(id) ? selectTodo.get(id) : undefined;
  if (row === undefined) return reply.code(404).send({ detail: 'Todo not found' });
  return { id: row.id, title: row.title, done: row.done === 1 };
});
// The bench's readiness probe.
app.get('/healthz', () => Promise.resolve({ status: 'ok' }));

await app.listen({ port: Number(args.port), host: '127.0.0.1' });
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
