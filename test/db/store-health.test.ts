// StoreHealth (src/db/store-health.ts): when a store is ready, and what it says about it, from the
// faults its operations meet. The log is the service's real logger, its lines collected; the clock
// of the rate-limited warnings is node:test's mock of Date.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { StoreError, type StoreFault } from '../../src/db/store-errors.js';
import { StoreHealth } from '../../src/db/store-health.js';
import { createLogger } from '../../src/observe/log.js';

const LEVELS: Readonly<Record<number, string>> = { 30: 'info', 40: 'warn', 50: 'error' };

interface Watched {
  readonly health: StoreHealth;
  /** Each log line so far as `level: message`, with its code, reason and count of suppressed warnings. */
  readonly lines: string[];
  /** The observer's calls so far: each fault, and `outage`. */
  readonly told: string[];
}

function watched(): Watched {
  const lines: string[] = [];
  const told: string[] = [];
  const log = createLogger('info', (line) => {
    const { level, msg, code, reason, sinceLastWarning } = JSON.parse(line) as {
      level: number;
      msg: string;
      code?: string;
      reason?: string;
      sinceLastWarning?: number;
    };
    const fields = [code, reason, sinceLastWarning]
      .filter((field) => field !== undefined)
      .join(', ');
    lines.push(`${LEVELS[level] ?? level}: ${msg}${fields === '' ? '' : ` (${fields})`}`);
  });
  const health = new StoreHealth(log, {
    fault: (fault: StoreFault) => told.push(fault),
    outage: () => told.push('outage'),
  });
  return { health, lines, told };
}

const state = (
  health: StoreHealth,
): { ready: boolean; unavailable: boolean; awaitingWrite: boolean } => ({
  ready: health.ready,
  unavailable: health.unavailable,
  awaitingWrite: health.awaitingWrite,
});
const READY = { ready: true, unavailable: false, awaitingWrite: false };

describe('StoreHealth', () => {
  test('a new store is ready: neither unavailable nor awaiting a write, and says nothing', () => {
    const { health, lines, told } = watched();
    health.succeeded('read');
    health.succeeded('write');
    assert.deepEqual(state(health), READY);
    assert.deepEqual([lines, told], [[], []]);
  });

  test('unavailable: not ready, one warning and one outage however many failures; the next success of any kind ends it, said once', () => {
    const { health, lines, told } = watched();
    health.failed(new StoreError('unavailable', 'connection refused'));
    health.failed(new StoreError('unavailable', 'still refused'));
    assert.deepEqual(state(health), { ready: false, unavailable: true, awaitingWrite: false });
    health.succeeded('read');
    health.succeeded('read');
    assert.deepEqual(state(health), READY);
    assert.deepEqual(told, ['unavailable', 'outage', 'unavailable']);
    assert.deepEqual(lines, [
      'warn: database unavailable: answering 503 until it answers again (STORE_UNAVAILABLE, connection refused)',
      'info: database available again',
    ]);
  });

  for (const [fault, failure] of [
    ['full', (): StoreError => new StoreError('full', 'disk full')],
    ['read-only', (): StoreError => new StoreError('read-only', 'read-only file')],
  ] as const) {
    test(`${fault}: writes fail while reads work, so not ready until a write succeeds; one warning per change of fault`, () => {
      const { health, lines, told } = watched();
      health.failed(failure());
      health.failed(failure());
      health.succeeded('read');
      assert.deepEqual(state(health), { ready: false, unavailable: false, awaitingWrite: true });
      health.succeeded('write');
      assert.deepEqual(state(health), READY);
      assert.deepEqual(told, [fault, fault]);
      const { code, message } = failure();
      assert.deepEqual(lines, [
        `warn: database refuses writes (${fault}): writes answer 503 and not ready until one succeeds (${code}, ${message})`,
        'info: database takes writes again',
      ]);
    });
  }

  test('a disk that fills and then turns read-only warns for each, and one successful write ends both', () => {
    const { health, lines } = watched();
    health.failed(new StoreError('full', 'disk full'));
    health.failed(new StoreError('read-only', 'read-only file'));
    health.succeeded('write');
    assert.deepEqual(state(health), READY);
    assert.deepEqual(
      lines.map((line) => line.split(':')[1]),
      [
        ' database refuses writes (full)',
        ' database refuses writes (read-only)',
        ' database takes writes again',
      ],
    );
  });

  test('an outage and failing writes together: the outage ends with any success, the writes only with a write', () => {
    const { health } = watched();
    health.failed(new StoreError('full', 'disk full'));
    health.failed(new StoreError('unavailable', 'gone'));
    health.succeeded('read');
    assert.deepEqual(state(health), { ready: false, unavailable: false, awaitingWrite: true });
    health.failed(new StoreError('unavailable', 'gone again'));
    health.succeeded('write');
    assert.deepEqual(state(health), READY);
  });

  test('corrupt: never ready again in this process, whatever succeeds after; one error line', () => {
    const { health, lines, told } = watched();
    health.failed(new StoreError('corrupt', 'database disk image is malformed'));
    health.failed(new StoreError('corrupt', 'malformed again'));
    health.succeeded('read');
    health.succeeded('write');
    assert.deepEqual(state(health), { ready: false, unavailable: false, awaitingWrite: false });
    assert.deepEqual(told, ['corrupt', 'corrupt']);
    assert.deepEqual(lines, [
      'error: database is corrupt: answering 500 and not ready; restore it from a backup (STORE_CORRUPT, database disk image is malformed)',
    ]);
  });

  test('busy and saturated leave readiness alone; each warns at most once per 10 s, the next warning counting those held back', (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    const { health, lines, told } = watched();
    health.failed(new StoreError('busy', 'lock wait'));
    health.failed(new StoreError('saturated', 'pool wait'));
    t.mock.timers.tick(9_999);
    health.failed(new StoreError('busy', 'lock wait 2'));
    health.failed(new StoreError('busy', 'lock wait 3'));
    health.failed(new StoreError('saturated', 'pool wait 2'));
    assert.deepEqual(state(health), READY);
    t.mock.timers.tick(1);
    health.failed(new StoreError('busy', 'lock wait 4'));
    health.failed(new StoreError('busy', 'lock wait 5'));
    assert.equal(told.length, 7);
    assert.deepEqual(told.slice(0, 2), ['busy', 'saturated']);
    assert.deepEqual(lines, [
      'warn: database busy: an operation waited too long for a lock (STORE_BUSY, lock wait, 0)',
      'warn: database connection pool saturated: requests waited too long for a connection (overload, not an outage) (STORE_SATURATED, pool wait, 0)',
      'warn: database busy: an operation waited too long for a lock (STORE_BUSY, lock wait 4, 2)',
    ]);
  });

  test('without a logger or an observer, the states are the same', () => {
    const health = new StoreHealth();
    health.failed(new StoreError('unavailable', 'gone'));
    health.failed(new StoreError('read-only', 'read-only'));
    health.failed(new StoreError('busy', 'busy'));
    assert.deepEqual(state(health), { ready: false, unavailable: true, awaitingWrite: true });
    health.succeeded('write');
    assert.deepEqual(state(health), READY);
    health.failed(new StoreError('corrupt', 'malformed'));
    assert.equal(health.ready, false);
  });
});
