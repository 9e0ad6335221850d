// `npm run bench:tracing-memory`: how much memory the to-do service holds with tracing on, every
// request sampled, under the load of `npm run bench` (1, 10 and 50 connections), against a
// collector that takes every export, and against one that never answers (the export queue then
// fills to its bound and stays there). Prints the peak RSS (VmHWM) of each server process beside
// the same service with tracing off; target: at most 160 MB with tracing on (issue 43).
//
//   npm run bench:tracing-memory                      about a minute
//   npm run bench:tracing-memory -- --seconds 10      each load phase's length
import { mkdtempSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { drive, type BenchRequest } from './load.js';
import { freePort, startServerProcess } from './processes.js';

const { values: flags } = parseArgs({ options: { seconds: { type: 'string', default: '5' } } });
const seconds = Number(flags.seconds);
if (!(seconds > 0)) throw new Error('--seconds must be a number above 0');

const PEAK_RSS_MB_MAX = 160;
const CLI = new URL('../src/cli.js', import.meta.url);
const LOADS: readonly { readonly request: BenchRequest; readonly status: number }[] = [
  { request: { method: 'GET', path: '/todos/1' }, status: 200 },
  {
    request: {
      method: 'POST',
      path: '/todos',
      body: '{"title":"Buy bread"}',
      contentType: 'application/json',
    },
    status: 201,
  },
];

/** A collector: answers every export at once ('ok'), or takes it and never answers ('stuck'). */
async function collector(kind: 'ok' | 'stuck'): Promise<{ url: string; close(): Promise<void> }> {
  const held: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      kind === 'ok'
        ? res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
        : held.push(res),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function peakRssMb(label: string, otlp: string | undefined): Promise<number> {
  const dir = mkdtempSync(`${tmpdir()}/tracing-memory-`);
  const port = await freePort();
  const args = [
    'todo',
    '--port',
    String(port),
    '--db',
    `sqlite:${dir}/todo.sqlite`,
    ...(otlp === undefined ? [] : ['--otel-endpoint', otlp]),
  ];
  const server = await startServerProcess(label, CLI, args, port);
  try {
    for (const connections of [1, 10, 50]) {
      for (const { request, status } of LOADS) {
        const m = await drive(server.url, request, {
          connections,
          duration_s: seconds,
          expectedStatus: status,
        });
        if (m.wrongStatus !== 0 || m.errors !== 0)
          throw new Error(`${label}: ${m.wrongStatus} wrong statuses, ${m.errors} errors`);
      }
    }
    return (server.peakRssBytes() ?? Number.NaN) / (1024 * 1024);
  } finally {
    await server.stop();
  }
}

const ok = await collector('ok');
const stuck = await collector('stuck');
try {
  const rows: [string, number][] = [
    ['tracing off', await peakRssMb('tracing off', undefined)],
    ['tracing on, collector answering', await peakRssMb('tracing on', ok.url)],
    [
      'tracing on, collector never answering',
      await peakRssMb('tracing on, stuck collector', stuck.url),
    ],
  ];
  const lines = [
    '| To-do service, GET /todos/1 and POST /todos at 1, 10, 50 connections | Peak RSS MB | Target |',
    '|---|---:|---|',
  ];
  for (const [label, mb] of rows)
    lines.push(
      `| ${label} | ${mb.toFixed(0)} | ${label === 'tracing off' ? '–' : mb <= PEAK_RSS_MB_MAX ? `≤ ${PEAK_RSS_MB_MAX}: met` : `≤ ${PEAK_RSS_MB_MAX}: **missed**`} |`,
    );
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await Promise.all([ok.close(), stuck.close()]);
}
