// The API lifecycle as a feature (feature.ts): off unless --deprecate names an operation. It is
// the feature the pipeline's shape was proved with (docs/internals/pipeline.md): this folder and
// its line in features.ts, and nothing else.
import { ConfigError } from '../../options.js';
import type { Feature } from '../feature.js';
import { operationKey, parseDeprecation, type Deprecation } from './deprecations.js';
import { lifecycleStage } from './stage.js';

const OPTION = 'deprecate';

export const lifecycle: Feature<readonly Deprecation[]> = {
  name: 'lifecycle',
  options: [
    {
      name: OPTION,
      variable: 'SVC_DEPRECATE',
      takes: 'list',
      usage: `--deprecate METHOD:PATH@DEPRECATED/SUNSET
                       mark an operation deprecated: its answers carry Deprecation, Sunset and
                       a Link to its documentation, and from SUNSET on it answers 410; the two
                       instants an ISO 8601 interval, e.g. 'GET:/v2/todos/{todo_id}@2026-01-01T
                       00:00:00Z/2027-01-01T00:00:00Z'; repeatable (SVC_DEPRECATE, apart by
                       spaces; default none)`,
    },
  ],
  configure(values) {
    const deprecations = values.list(OPTION).map(parseDeprecation);
    const keys = deprecations.map((entry) => operationKey(entry.method, entry.path));
    const twice = keys.find((key, i) => keys.indexOf(key) !== i);
    if (twice !== undefined) throw new ConfigError(`--deprecate names ${twice} twice`);
    return deprecations.length === 0 ? undefined : deprecations;
  },
  join: (deprecations) => ({ stages: (routes) => [lifecycleStage(deprecations, routes)] }),
  verify(deprecations, routes) {
    const served = new Set(routes.map((route) => operationKey(route.method, route.path)));
    for (const entry of deprecations) {
      const key = operationKey(entry.method, entry.path);
      if (!served.has(key))
        throw new ConfigError(`--deprecate names ${key}, which no service started here has`);
    }
  },
};
