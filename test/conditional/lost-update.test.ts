// The lost update is gone: concurrent writers that read the same version and PUT with If-Match
// are refused (412) all but one, whatever instance each reaches, because the check is made in the
// write's own transaction. Real processes: four instances on one PostgreSQL database, and one on a
// SQLite file, which also keeps its ETags across a restart.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { get, send, type RawResponse } from '../support/http.js';
import { runBounded } from '../support/load.js';
import { createTestDatabase, postgresSkip } from '../support/postgres.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { processSuiteUnless } from '../support/suite.js';

const WRITERS = 1_000;
const IN_FLIGHT = 100;

const putWith = (url: string, tag: string, title: string): Promise<RawResponse> =>
  send(url, {
    method: 'PUT',
    path: '/todos/1',
    headers: [
      ['Content-Type', 'application/json'],
      ['If-Match', tag],
    ],
    body: JSON.stringify({ title }),
  });

/** 1,000 PUTs of item 1 carrying its current tag, spread over the instances: exactly one wins, and every instance reads its body and one new tag. */
async function assertOneWriterWins(instances: readonly ServiceProcess[]): Promise<void> {
  const urls = instances.map((instance) => instance.urls[0] as string);
  const read = await get(urls[0] as string, '/todos/1');
  const tag = read.headers.etag as string;
  assert.match(tag, /^"\d+"$/);
  const answers = await runBounded(WRITERS, IN_FLIGHT, (i) =>
    putWith(urls[i % urls.length] as string, tag, `writer ${i}`),
  );
  const winners = answers.flatMap((answer, i) =>
    answer.status >= 200 && answer.status < 300 ? [i] : [],
  );
  assert.equal(winners.length, 1, `exactly one 2xx, not ${winners.length}`);
  const refused = answers.filter(
    (answer) =>
      answer.status === 412 &&
      (JSON.parse(answer.text) as { error: { code: string } }).error.code === 'PRECONDITION_FAILED',
  );
  assert.equal(
    refused.length,
    WRITERS - 1,
    `${WRITERS - 1} × 412: ${[...new Set(answers.map((answer) => answer.status))].join(', ')}`,
  );
  const winner = answers[winners[0] as number] as RawResponse;
  assert.equal(winner.headers.etag, undefined, "a PUT's answer carries no ETag (RFC 9110 §9.3.4)");
  const made = (await send(urls[0] as string, { method: 'HEAD', path: '/todos/1' })).headers.etag;
  assert.ok(typeof made === 'string', 'HEAD shows the version the winner made');
  assert.match(made, /^"\d+"$/);
  assert.notEqual(made, tag);
  for (const url of urls) {
    const now = await get(url, '/todos/1');
    assert.deepEqual(JSON.parse(now.text), { id: 1, title: `writer ${winners[0]}`, done: false });
    assert.equal(now.headers.etag, made, "every instance reads the winner's tag");
  }
}

const skip = await postgresSkip();

processSuiteUnless(skip, 'no lost update across four instances on one PostgreSQL database', () => {
  test('1,000 concurrent PUTs with the same ETag over four instances: one 2xx, 999 × 412, and the item holds that one body', async () => {
    const database = await createTestDatabase();
    const instances = await Promise.all(
      Array.from({ length: 4 }, () =>
        startServiceProcess([
          'todo',
          '--db',
          database.url,
          '--errors',
          'unified',
          '--access-log',
          'off',
        ]),
      ),
    );
    try {
      await assertOneWriterWins(instances);
    } finally {
      await Promise.all(instances.map((instance) => instance.kill()));
      await database.drop();
    }
  });
});

processSuiteUnless(false, 'no lost update on one SQLite instance', () => {
  test('1,000 concurrent PUTs with the same ETag: one 2xx, 999 × 412; after a restart the item keeps its ETag', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'lost-update-'));
    const args = [
      'todo',
      '--db',
      `sqlite:${join(folder, 'todo.sqlite')}`,
      '--errors',
      'unified',
      '--access-log',
      'off',
    ];
    let instance = await startServiceProcess(args);
    try {
      await assertOneWriterWins([instance]);
      const before = await get(instance.urls[0] as string, '/todos/1');
      await instance.kill();
      instance = await startServiceProcess(args);
      const after = await get(instance.urls[0] as string, '/todos/1');
      assert.equal(after.headers.etag, before.headers.etag);
      assert.equal(after.text, before.text);
      const notModified = await send(instance.urls[0] as string, {
        method: 'GET',
        path: '/todos/1',
        headers: [['If-None-Match', before.headers.etag as string]],
      });
      assert.equal(notModified.status, 304, 'a tag read before the restart is still current');
    } finally {
      await instance.kill();
      await rm(folder, { recursive: true, force: true });
    }
  });
});
