// The baseline: a bare node:http server that gives the benchmarked requests the same status and
// the same JSON as our services, written the way one would by hand (a switch on the path,
// JSON.parse, JSON.stringify, a Map for data), so that a ratio shows what our layers cost over it.
// With --db FILE its writes go to SQLite instead, durably, one transaction per request
// (baseline-sqlite.ts): the same job as our durable writes, the second ruler for them. With
// --rate-limit, each GET of a to-do is admitted by a GCRA per client address held in a Map and its
// answer carries RateLimit-Policy and RateLimit: what rate limits cost a server written by hand.
// With --shed-all, every request is answered 503 at once, unread: the least a shed answer costs on
// node:http (bench/overload.ts). It runs as its own process:  node baseline.js --port N --errors
// default|unified|problem --openapi FILE --accounts a=1 [--db FILE]
import { readFileSync } from 'node:fs';
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    errors: { type: 'string', default: 'default' },
    openapi: { type: 'string' },
    accounts: { type: 'string', default: 'alice=100' },
    db: { type: 'string' },
    'rate-limit': { type: 'boolean', default: false },
    'shed-all': { type: 'boolean', default: false },
  },
});
const unified = args.errors === 'unified';
const problem = args.errors === 'problem';
const openapi = args.openapi === undefined ? undefined : readFileSync(args.openapi);

interface Todo {
  id: number;
  title: string;
  done: boolean;
}
const todos = new Map<number, Todo>([[1, { id: 1, title: 'Buy milk', done: false }]]);
let lastTodoId = 1;
const balances = new Map<string, number>(
  args.accounts
    .split(',')
    .map((entry) => [
      entry.slice(0, entry.lastIndexOf('=')),
      Number(entry.slice(entry.lastIndexOf('=') + 1)),
    ]),
);
// Loaded only when asked for, so that the in-memory server is exactly what it was.
const durable =
  args.db === undefined
    ? undefined
    : (await import('./baseline-sqlite.js')).openBareSqlite(args.db, balances);

/** Reads limited to a rate no request of the benchmark reaches: every one is admitted. */
const READS_PER_SECOND = 1_000_000;
const READS_BURST = 1_000_000;
const READ_INTERVAL_MS = 1000 / READS_PER_SECOND;
const readsDueMs = new Map<string, number>();

/** The GCRA admission of one read of `client`, and its answer's RateLimit fields. */
function admitRead(client: string): Record<string, string | number> | undefined {
  const nowMs = Date.now();
  const due = Math.max(readsDueMs.get(client) ?? nowMs, nowMs) + READ_INTERVAL_MS;
  if (due - nowMs > READS_BURST * READ_INTERVAL_MS) return undefined;
  readsDueMs.set(client, due);
  const remaining = Math.floor((READS_BURST * READ_INTERVAL_MS - (due - nowMs)) / READ_INTERVAL_MS);
  return {
    'RateLimit-Policy': `"reads";q=${READS_BURST};w=${Math.ceil(READS_BURST / READS_PER_SECOND)}`,
    RateLimit: `"reads";r=${remaining};t=${Math.ceil((due - nowMs) / 1000)}`,
  };
}

function send(
  res: ServerResponse,
  status: number,
  body: string | Buffer,
  contentType = 'application/json',
  more?: Record<string, string | number>,
): void {
  if (more !== undefined) {
    res.writeHead(status, {
      'Content-Type': contentType,
      'Content-Length': Buffer.byteLength(body),
      ...more,
    });
    res.end(body);
    return;
  }
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function sendError(res: ServerResponse, status: number, detail: string): void {
  if (problem) {
    const body = {
      type: 'about:blank',
      title: STATUS_CODES[status],
      status,
      detail,
      code: `HTTP_${status}`,
    };
    return send(res, status, JSON.stringify(body), 'application/problem+json');
  }
  send(
    res,
    status,
    JSON.stringify(unified ? { error: { code: `HTTP_${status}`, message: detail } } : { detail }),
  );
}

function sendValidation(
  res: ServerResponse,
  items: { type: string; loc: (string | number)[]; msg: string; input: unknown }[],
): void {
  if (problem) {
    const errors = items.map((i) =>
      i.loc[0] === 'path'
        ? { detail: i.msg, parameter: i.loc[1], type: i.type }
        : { detail: i.msg, pointer: `#/${i.loc.slice(1).join('/')}`, type: i.type },
    );
    const body = {
      type: '/docs/problems#validation-failed',
      title: 'Validation failed',
      status: 422,
      detail: 'Some fields are wrong',
      code: 'VALIDATION_FAILED',
      errors,
    };
    return send(res, 422, JSON.stringify(body), 'application/problem+json');
  }
  const body = unified
    ? {
        error: {
          code: 'VALIDATION_FAILED',
          message: 'Some fields are wrong',
          fields: items.map((i) => ({ field: i.loc.join('.'), message: i.msg })),
        },
      }
    : { detail: items };
  send(res, 422, JSON.stringify(body));
}

function readJson(req: IncomingMessage, then: (value: unknown, ok: boolean) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    try {
      then(JSON.parse(Buffer.concat(chunks).toString('utf8')), true);
    } catch {
      then(undefined, false);
    }
  });
}

function createTodo(req: IncomingMessage, res: ServerResponse): void {
  readJson(req, (body, ok) => {
    if (!ok)
      return sendValidation(res, [
        { type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error', input: {} },
      ]);
    const fields =
      typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    if (typeof fields.title !== 'string') {
      return sendValidation(res, [
        { type: 'missing', loc: ['body', 'title'], msg: 'Field required', input: body },
      ]);
    }
    const done = fields.done === true;
    if (durable !== undefined)
      return send(
        res,
        201,
        JSON.stringify({ id: durable.create(fields.title, done), title: fields.title, done }),
      );
    lastTodoId += 1;
    const todo: Todo = { id: lastTodoId, title: fields.title, done };
    todos.set(todo.id, todo);
    send(res, 201, JSON.stringify(todo));
  });
}

/** A replace, or a create under the id; `If-Match: *` (the benchmark's condition) refuses an absent item. */
function replaceTodo(req: IncomingMessage, res: ServerResponse, idText: string): void {
  readJson(req, (body, ok) => {
    if (!ok)
      return sendValidation(res, [
        { type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error', input: {} },
      ]);
    const fields =
      typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    if (typeof fields.title !== 'string') {
      return sendValidation(res, [
        { type: 'missing', loc: ['body', 'title'], msg: 'Field required', input: body },
      ]);
    }
    const id = Number(idText);
    const existed = todos.has(id);
    if (req.headers['if-match'] === '*' && !existed)
      return sendError(res, 412, 'Precondition Failed');
    const todo: Todo = { id, title: fields.title, done: fields.done === true };
    todos.set(id, todo);
    send(res, existed ? 200 : 201, JSON.stringify(todo));
  });
}

function withdraw(res: ServerResponse, account: string, amountText: string): void {
  if (!/^\d+$/.test(amountText)) {
    const msg = 'Input should be a valid integer, unable to parse string as an integer';
    return sendValidation(res, [
      { type: 'int_parsing', loc: ['path', 'amount'], msg, input: amountText },
    ]);
  }
  const amount = Number(amountText);
  if (durable !== undefined) {
    const left = durable.withdraw(account, amount);
    if (left === 'unknown-account') return sendError(res, 404, `Account ${account} not found`);
    if (left === 'insufficient')
      return send(res, 500, 'Internal Server Error', 'text/plain; charset=utf-8');
    return send(res, 200, JSON.stringify({ account, balance: left }));
  }
  const balance = balances.get(account);
  if (balance === undefined) return sendError(res, 404, `Account ${account} not found`);
  if (amount > balance) return send(res, 500, 'Internal Server Error', 'text/plain; charset=utf-8');
  balances.set(account, balance - amount);
  send(res, 200, JSON.stringify({ account, balance: balance - amount }));
}

const SHED_BODY = JSON.stringify({
  detail: {
    code: 'OVERLOADED',
    message: 'The service is overloaded; retry after the Retry-After seconds',
  },
});

const server = createServer((req, res) => {
  if (args['shed-all']) {
    res.writeHead(503, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(SHED_BODY),
      'Retry-After': '1',
    });
    res.end(SHED_BODY);
    return;
  }
  const url = req.url ?? '/';
  const parts = url.split('/');
  if (req.method === 'GET' && parts.length === 3 && parts[1] === 'todos') {
    const fields = args['rate-limit'] ? admitRead(req.socket.remoteAddress ?? '') : undefined;
    if (args['rate-limit'] && fields === undefined) return sendError(res, 429, 'Too Many Requests');
    const todo =
      durable === undefined ? todos.get(Number(parts[2])) : durable.todo(Number(parts[2]));
    return todo === undefined
      ? sendError(res, 404, 'Todo not found')
      : send(res, 200, JSON.stringify(todo), undefined, fields);
  }
  if (req.method === 'POST' && url === '/todos') return createTodo(req, res);
  if (req.method === 'PUT' && parts.length === 3 && parts[1] === 'todos')
    return replaceTodo(req, res, parts[2] as string);
  if (req.method === 'GET' && parts.length === 3 && parts[1] === 'accounts') {
    const account = parts[2] as string;
    const balance = durable === undefined ? balances.get(account) : durable.balance(account);
    return balance === undefined
      ? sendError(res, 404, `Account ${account} not found`)
      : send(res, 200, JSON.stringify({ account, balance }));
  }
  if (req.method === 'POST' && parts.length === 4 && parts[1] === 'withdraw') {
    return withdraw(res, parts[2] as string, parts[3] as string);
  }
  if (req.method === 'GET' && url === '/openapi.json' && openapi !== undefined)
    return send(res, 200, openapi);
  sendError(res, 404, 'Not Found');
});

server.listen(Number(args.port), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(
    `${JSON.stringify({ message: 'listening', url: `http://127.0.0.1:${port}` })}\n`,
  );
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
