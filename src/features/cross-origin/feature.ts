// Cross-origin protection as a feature (feature.ts): on by default, since it changes no answer to
// a client that is not a browser page (cross-origin.ts); --cross-origin-protection off turns it
// off. The origins CORS lets call the service (--cors-origin) are the ones it trusts.
import { ConfigError } from '../../options.js';
import { CORS_ORIGIN_OPTION } from '../cors/feature.js';
import { parseCorsOrigins } from '../cors/cors.js';
import type { Feature } from '../feature.js';
import { crossOriginStage, type CrossOriginPolicy } from './cross-origin.js';

const OPTION = 'cross-origin-protection';

export const crossOrigin: Feature<CrossOriginPolicy> = {
  name: 'cross-origin',
  options: [
    {
      name: OPTION,
      variable: 'SVC_CROSS_ORIGIN_PROTECTION',
      takes: 'value',
      usage: `--cross-origin-protection on|off
                       refuse (403) a POST, PUT or DELETE that a browser marks as sent by a page
                       on another site, the --cors-origin origins excepted
                       (SVC_CROSS_ORIGIN_PROTECTION, default on)`,
    },
  ],
  configure(values) {
    if (!protectionOn(values.text(OPTION))) return undefined;
    const origins = values.text(CORS_ORIGIN_OPTION);
    const policy = origins === undefined ? undefined : parseCorsOrigins(origins);
    return { trusted: typeof policy === 'object' ? policy.origins : new Set() };
  },
  join: (policy) => ({ stages: () => [crossOriginStage(policy)] }),
};

/** on or off; the variable also takes the switches' 1, true, 0 and false, as it did. */
function protectionOn(text: string | undefined): boolean {
  switch (text?.toLowerCase()) {
    case undefined:
    case 'on':
    case '1':
    case 'true':
      return true;
    case 'off':
    case '0':
    case 'false':
      return false;
    default:
      throw new ConfigError(`--cross-origin-protection must be on or off, not "${text}"`);
  }
}
