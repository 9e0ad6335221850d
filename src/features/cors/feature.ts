// CORS as a feature (feature.ts): off unless the service is given the origins whose pages may call
// it (--cors-origin); cors.ts says what it answers.
import { ConfigError } from '../../options.js';
import type { Feature } from '../feature.js';
import { parseCorsOrigins, type CorsPolicy } from './cors.js';
import { corsStage } from './stage.js';

export const CORS_ORIGIN_OPTION = 'cors-origin';

export const cors: Feature<CorsPolicy> = {
  name: 'cors',
  options: [
    {
      name: CORS_ORIGIN_OPTION,
      variable: 'SVC_CORS_ORIGIN',
      takes: 'value',
      usage: `--cors-origin LIST   origins whose pages may call the services, scheme://host[:port],...
                       (SVC_CORS_ORIGIN, default none: CORS off); they may also write past the
                       cross-origin protection`,
    },
  ],
  configure(values) {
    const text = values.text(CORS_ORIGIN_OPTION);
    if (text === undefined) return undefined;
    const policy = parseCorsOrigins(text);
    if (typeof policy === 'string') throw new ConfigError(`--cors-origin: ${policy}`);
    return policy;
  },
  join: (policy) => ({ stages: () => [corsStage(policy)] }),
};
