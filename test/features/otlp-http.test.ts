// One OTLP/HTTP export (src/features/tracing/otlp-http.ts) against collectors that misbehave.
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { otlpSender } from '../../src/features/tracing/otlp-http.js';

test('an export is given up at its time limit even when the collector trickles its answer a byte at a time, each well within the limit', async () => {
  const trickling = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/x-protobuf' });
    trickling.add(res);
  });
  const drip = setInterval(() => {
    for (const res of trickling) res.write('x');
  }, 50);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const sender = otlpSender({
    url: `http://127.0.0.1:${port}/v1/traces`,
    contentType: 'application/x-protobuf',
    headers: {},
    timeoutMs: 400,
  });
  try {
    const started = performance.now();
    // Without a timer for the whole export, this would wait as long as the collector drips.
    let giveUp: NodeJS.Timeout | undefined;
    const answer = await Promise.race([
      sender.send(new Uint8Array([1, 2, 3])),
      new Promise((resolve) => {
        giveUp = setTimeout(resolve, 5000, 'still waiting after 5 s');
      }),
    ]);
    clearTimeout(giveUp);
    const tookMs = performance.now() - started;
    assert.deepEqual(answer, { kind: 'failed', reason: 'no answer within 400 ms' });
    assert.ok(tookMs >= 390 && tookMs < 3000, `${tookMs} ms`);
  } finally {
    clearInterval(drip);
    sender.close();
    for (const res of trickling) res.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('an export the collector answers in time is delivered', async () => {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const sender = otlpSender({
    url: `http://127.0.0.1:${port}/v1/traces`,
    contentType: 'application/x-protobuf',
    headers: { 'x-tenant': '7' },
    timeoutMs: 60_000,
  });
  try {
    assert.deepEqual(await sender.send(new Uint8Array([1])), { kind: 'delivered' });
  } finally {
    sender.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('a header node:http refuses fails that export: the promise answers, it does not reject', async () => {
  const sender = otlpSender({
    url: 'http://127.0.0.1:9/v1/traces',
    contentType: 'application/x-protobuf',
    headers: { 'api key': 'x' },
    timeoutMs: 1000,
  });
  try {
    const answer = await sender.send(new Uint8Array([1]));
    assert.equal(answer.kind, 'failed');
  } finally {
    sender.close();
  }
});
