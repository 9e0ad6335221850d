// Clients that misbehave at the connection level: they leave in the middle of a body, or open
// connections and send nothing. Neither is a fault of the server, and neither may lock others out.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import { postJson } from '../support/http.js';
import { withServer } from '../support/server.js';

/** Sends the head of a POST announcing 1,000 body bytes, ten of them, and closes the connection. */
function leaveMidBody(url: string, path: string): Promise<void> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"title":`);
      socket.destroy();
    });
    socket.once('close', () => resolve());
    socket.once('error', reject);
  });
}

/** Resolves once check() holds, looking after each short wait; fails after timeout_ms. */
async function eventually(check: () => boolean, what: string, timeout_ms = 10_000): Promise<void> {
  const deadline = Date.now() + timeout_ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`not within ${timeout_ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

interface LogEntry {
  readonly level?: unknown;
  readonly message?: unknown;
  readonly msg?: unknown;
}

describe('hostile clients', () => {
  test('a client that leaves mid-body costs one info line per request, with no error and no stack', async () => {
    const lines: string[] = [];
    await withServer({ service: 'todo', logLines: lines }, async (url) => {
      const aborted = 25;
      for (let k = 0; k < aborted; k++) await leaveMidBody(url, '/todos');
      await eventually(() => lines.length >= aborted, `${aborted} log lines`);
      // The server goes on answering, and a complete request after them adds nothing to the log
      // beyond what a normal request writes.
      const before = lines.length;
      assert.equal((await postJson(url, '/todos', '{"title":"after"}')).status, 201);
      const aboutAborts = lines.slice(0, before);
      assert.equal(aboutAborts.length, aborted, aboutAborts.join(''));
      for (const line of aboutAborts) {
        const entry = JSON.parse(line) as LogEntry;
        assert.ok(entry.level === 'info' || entry.level === 30, `not info: ${line}`);
        assert.match(String(entry.message ?? entry.msg), /abort/, line);
        assert.doesNotMatch(line, /stack|\n\s+at /, line);
      }
    });
  });
});
