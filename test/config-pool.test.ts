// The PostgreSQL pool's two settings, from flags and from the environment, and their bounds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, readConfig } from '../src/config.js';

test('the pool size and the pool wait are unset (the store defaults) unless given', () => {
  const config = readConfig([], {});
  assert.equal(config.dbPoolSize, undefined);
  assert.equal(config.dbPoolWaitMs, undefined);
});

test('--db-pool-size and --db-pool-wait-ms set them; the flags win over the environment', () => {
  const env = { SVC_DB_POOL_SIZE: '5', SVC_DB_POOL_WAIT_MS: '2000' };
  assert.deepEqual(pick(readConfig([], env)), { size: 5, wait: 2000 });
  assert.deepEqual(pick(readConfig(['--db-pool-size', '40', '--db-pool-wait-ms=15000'], env)), {
    size: 40,
    wait: 15000,
  });
});

test('a pool size outside 1–1000 or a wait outside 1–30000 ms is a configuration error', () => {
  for (const args of [
    ['--db-pool-size', '0'],
    ['--db-pool-size', '1001'],
    ['--db-pool-size', 'ten'],
    ['--db-pool-wait-ms', '0'],
    ['--db-pool-wait-ms', '30001'],
    ['--db-pool-wait-ms', '1.5'],
  ]) {
    assert.throws(() => readConfig(args, {}), ConfigError, args.join(' '));
  }
  assert.deepEqual(pick(readConfig(['--db-pool-size', '1000', '--db-pool-wait-ms', '30000'], {})), {
    size: 1000,
    wait: 30000,
  });
  assert.deepEqual(pick(readConfig(['--db-pool-size', '1', '--db-pool-wait-ms', '1'], {})), {
    size: 1,
    wait: 1,
  });
});

function pick(config: ReturnType<typeof readConfig>): {
  size: number | undefined;
  wait: number | undefined;
} {
  return { size: config.dbPoolSize, wait: config.dbPoolWaitMs };
}

test('--db-pooler transaction (or SVC_DB_POOLER) says a transaction pooler stands before PostgreSQL; unset by default', () => {
  const db = ['--db', 'postgres://postgres@127.0.0.1:6432/test'];
  assert.equal(readConfig(db, {}).dbPooler, undefined);
  assert.equal(readConfig([...db, '--db-pooler', 'transaction'], {}).dbPooler, 'transaction');
  assert.equal(readConfig(db, { SVC_DB_POOLER: 'none' }).dbPooler, 'none');
});

test('--db-pooler other than none or transaction, or without a PostgreSQL database, is a configuration error', () => {
  assert.throws(
    () => readConfig(['--db', 'postgres://h/db', '--db-pooler', 'session'], {}),
    /--db-pooler must be none or transaction, not "session"/,
  );
  assert.throws(
    () => readConfig(['--db-pooler', 'transaction'], {}),
    /--db-pooler is for PostgreSQL/,
  );
  assert.throws(
    () => readConfig(['--db', 'sqlite:x.sqlite', '--db-pooler', 'transaction'], {}),
    ConfigError,
  );
});
