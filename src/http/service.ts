// A service as the contract layer sees it: a title, routes, the schemas they name, and a store
// to ask whether it is ready and to close at shutdown.
import type { Route } from './route.js';
import type { JsonSchema } from './validation/schema.js';

export interface ServiceDefinition {
  readonly title: string;
  readonly version: string;
  readonly routes: readonly Route[];
  readonly components: Readonly<Record<string, JsonSchema>>;
  /** True when the service's database answers. */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}
