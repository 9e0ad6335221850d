// Load shedding as a feature (feature.ts): off unless a saturation signal's threshold is set
// (load-shedding.ts says what each signal is).
import { parseBounded } from '../../options.js';
import type { Feature } from '../feature.js';
import { LoadShedder, sheddingStage, type SheddingPolicy } from './load-shedding.js';

/**
 * With shedding on, connections the process has not accepted yet may queue up to the kernel's own
 * limit (net.core.somaxconn, if lower) rather than Node's 511: past the queue the kernel drops a
 * client's handshake, and the client tries again 1 s later, then 3 s after the first, unseen by any
 * signal and unanswered by any 503.
 */
const SHEDDING_BACKLOG = 65_535;

export const shedding: Feature<SheddingPolicy> = {
  name: 'shedding',
  options: [
    {
      name: 'shed-waiting',
      variable: 'SVC_SHED_WAITING',
      takes: 'value',
      usage: `--shed-waiting N     answer new requests 503 while N requests wait for the database
                       (SVC_SHED_WAITING, default off)`,
    },
    {
      name: 'shed-loop-busy',
      variable: 'SVC_SHED_LOOP_BUSY',
      takes: 'value',
      usage: `--shed-loop-busy PERCENT
                       answer a share of new requests 503, steered to keep the event loop busy
                       at most PERCENT (1 to 99) of the time; only for requests that cost several
                       times a 503 (SVC_SHED_LOOP_BUSY, default off)`,
    },
    {
      name: 'shed-loop-delay-ms',
      variable: 'SVC_SHED_LOOP_DELAY_MS',
      takes: 'value',
      usage: '',
      refusal:
        '--shed-loop-delay-ms (SVC_SHED_LOOP_DELAY_MS) was replaced by --shed-loop-busy PERCENT (SVC_SHED_LOOP_BUSY): see docs/load-shedding.md',
    },
  ],
  configure(values) {
    const waiting = values.text('shed-waiting');
    const busy = values.text('shed-loop-busy');
    if (waiting === undefined && busy === undefined) return undefined;
    return {
      waitingMax:
        waiting === undefined ? undefined : parseBounded(waiting, '--shed-waiting', 1, 100_000),
      loopBusy:
        busy === undefined ? undefined : parseBounded(busy, '--shed-loop-busy', 1, 99) / 100,
    };
  },
  join(policy, service) {
    const shedder = new LoadShedder(policy, service.service, service.metrics);
    return {
      stages: () => [sheddingStage(shedder)],
      backlog: SHEDDING_BACKLOG,
      close: () => shedder.stop(),
    };
  },
};
