// Request deadlines as a feature (feature.ts): on by default (deadline.ts says why 15 s), off with
// --deadline-ms 0.
import { parseBounded } from '../../options.js';
import type { Feature } from '../feature.js';
import { DEADLINE_MS_DEFAULT, DEADLINE_MS_MAX, deadlineStage } from './deadline.js';

export const deadlines: Feature<number> = {
  name: 'deadlines',
  options: [
    {
      name: 'deadline-ms',
      variable: 'SVC_DEADLINE_MS',
      takes: 'value',
      usage: `--deadline-ms MS     a request still waiting for the database this long after it arrived is
                       answered 504; 0 turns deadlines off (SVC_DEADLINE_MS, default 15000)`,
    },
  ],
  configure(values) {
    const text = values.text('deadline-ms');
    const ms =
      text === undefined
        ? DEADLINE_MS_DEFAULT
        : parseBounded(text, '--deadline-ms', 0, DEADLINE_MS_MAX);
    return ms === 0 ? undefined : ms;
  },
  join: (ms) => ({ stages: () => [deadlineStage(ms)] }),
};
