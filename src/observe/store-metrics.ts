// The store's metrics for Prometheus: prom-client's side of the StoreObserver that storage reports
// to (src/db knows nothing of prom-client). Batches are a few hundred a second at most, so
// prom-client's own observe() is cheap enough here; depths and pool counts are read at scrape time.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { StoreFault } from '../db/store-errors.js';
import type { PoolStats, StoreObserver } from '../db/store-observer.js';

const BATCH_SIZE_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
const COMMIT_BUCKETS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** From a free connection at once to the longest --db-pool-wait-ms. */
const POOL_WAIT_BUCKETS_S = [0, 0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const FAULTS: readonly StoreFault[] = [
  'unavailable',
  'busy',
  'saturated',
  'full',
  'read-only',
  'corrupt',
];

export function storeMetrics(service: string, registry: Registry): StoreObserver {
  const labels = { service };
  const registers = [registry];
  const labelNames = ['service'] as const;
  const batchSize = new Histogram({
    name: 'store_group_commit_batch_size',
    help: 'Writes committed together in one group-commit batch (one transaction, one fsync)',
    labelNames,
    buckets: BATCH_SIZE_BUCKETS,
    registers,
  });
  const commitTime = new Histogram({
    name: 'store_group_commit_duration_seconds',
    help: 'Time a group-commit batch took to be decided and committed (fsync included), queueing excluded',
    labelNames,
    buckets: COMMIT_BUCKETS_S,
    registers,
  });
  const outages = new Counter({
    name: 'store_outages_total',
    help: 'Times the database became unreachable',
    labelNames,
    registers,
  });
  const faults = new Counter({
    name: 'store_faults_total',
    help: 'Store operations that failed for a database fault, by fault: unavailable, busy, saturated (pool wait too long), full, read-only, corrupt',
    labelNames: ['service', 'fault'],
    registers,
  });
  const poolWait = new Histogram({
    name: 'store_pool_wait_seconds',
    help: 'PostgreSQL: how long an operation waited for a pooled connection (saturation shows as a shift to the right)',
    labelNames,
    buckets: POOL_WAIT_BUCKETS_S,
    registers,
  });
  // Every series exists from the start, so that a rate() or an alert sees 0 rather than nothing.
  batchSize.zero(labels);
  commitTime.zero(labels);
  outages.inc(labels, 0);
  for (const fault of FAULTS) faults.inc({ service, fault }, 0);

  return {
    batchCommitted(writes, commitSeconds) {
      batchSize.observe(labels, writes);
      commitTime.observe(labels, commitSeconds);
    },
    watchWriteQueue(depth) {
      new Gauge({
        name: 'store_write_queue_depth',
        help: 'Writes queued for group commit or in a batch not yet committed',
        labelNames,
        registers,
        collect() {
          this.set(labels, depth());
        },
      });
    },
    watchPool(stats: () => PoolStats) {
      new Gauge({
        name: 'store_pool_connections',
        help: 'PostgreSQL pool connections, by state: open (busy or idle) and idle',
        labelNames: ['service', 'state'],
        registers,
        collect() {
          const now = stats();
          this.set({ service, state: 'open' }, now.total);
          this.set({ service, state: 'idle' }, now.idle);
        },
      });
      new Gauge({
        name: 'store_pool_waiting',
        help: 'Operations waiting for a PostgreSQL pool connection',
        labelNames,
        registers,
        collect() {
          this.set(labels, stats().waiting);
        },
      });
    },
    outage() {
      outages.inc(labels);
    },
    fault(fault) {
      faults.inc({ service, fault });
    },
    poolWaited(waitedMs) {
      poolWait.observe(labels, waitedMs / 1000);
    },
  };
}
