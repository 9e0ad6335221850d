// What a feature is (docs/internals/pipeline.md): one module that declares its options and reads
// them, joins each service it is on with its stages (stage.ts) and what its store needs of it, and
// lets go of what it holds when the service stops. The list of features (features.ts) is all the
// program knows of them: config.ts reads their options through it, cli.ts and server.ts join them
// to each service through it, and the documents are drawn from their stages' declarations alone.
import type { BlockList } from 'node:net';
import type { Registry } from 'prom-client';
import type { DbSpec, ServiceName } from '../config.js';
import type { Pooler } from '../db/postgres/pooler.js';
import type { StoreObserver } from '../db/store-observer.js';
import type { StoreOptions } from '../db/store-options.js';
import type { ErrorFormat } from '../http/render.js';
import type { Route } from '../http/route.js';
import type { PlacedStage } from '../http/stages/stage.js';
import type { Logger } from '../observe/log.js';
import type { OptionSpec, OptionValues } from '../options.js';

/** What a feature is told of a service it joins. */
export interface ServiceScope {
  readonly service: ServiceName;
  readonly db: DbSpec;
  readonly pooler: Pooler | undefined;
  readonly errorFormat: ErrorFormat;
  /** The service's logger. */
  readonly log: Logger;
  /** The service's metrics registry; undefined with --metrics off. */
  readonly metrics: Registry | undefined;
}

/** What the store of a service is given by a feature as it opens. */
export type StoreHooks = Pick<StoreOptions, 'observer' | 'rider' | 'idempotencyTtlMs'>;

/** What a feature gives one service. */
export interface Joined {
  readonly store?: StoreHooks;
  /** The feature's stages, given the service's own operations (those it may limit or mark). */
  stages(routes: readonly Route[]): readonly PlacedStage[];
  /** Connections the kernel may queue for the service before it accepts them, at least. */
  readonly backlog?: number;
  /**
   * Peers every client of theirs comes through (trusted proxies): the connection guard holds them
   * to the server's bound only, not to one client's.
   */
  readonly sharedPeers?: BlockList;
  /** What the service's `listening` line says of the feature (nothing, for most). */
  readonly said?: Readonly<Record<string, string>>;
  /** Called once the service stopped and its store closed: lets go of what the feature holds. */
  close?(): Promise<unknown> | void;
}

export interface Feature<S> {
  readonly name: string;
  readonly options: readonly OptionSpec[];
  /** The feature's settings from the options, or undefined when it is off; a bad value throws ConfigError. */
  configure(values: OptionValues): S | undefined;
  /** Joins one service, before the service's store opens. */
  join(settings: S, service: ServiceScope): Joined | Promise<Joined>;
  /**
   * Checks the settings against every operation the process serves, once every service joined
   * (an option that names an operation no service has): throws ConfigError.
   */
  verify?(settings: S, routes: readonly Route[]): void;
}

/** A feature that is on, with its settings: what the rest of the program holds of it. */
export interface FeatureOn {
  readonly name: string;
  readonly settings: unknown;
  join(service: ServiceScope): Joined | Promise<Joined>;
  verify(routes: readonly Route[]): void;
}

/** The feature on with these settings (a test, or a caller that made them itself). */
export function featureOn<S>(feature: Feature<S>, settings: S): FeatureOn {
  return {
    name: feature.name,
    settings,
    join: (service) => feature.join(settings, service),
    verify: (routes) => feature.verify?.(settings, routes),
  };
}

/** The feature, configured from the options; undefined when it is off. */
export function configureFeature<S>(
  feature: Feature<S>,
  values: OptionValues,
): FeatureOn | undefined {
  const settings = feature.configure(values);
  return settings === undefined ? undefined : featureOn(feature, settings);
}

/** The settings of `feature` among those on; undefined when it is off. */
export function settingsOf<S>(on: readonly FeatureOn[], feature: Feature<S>): S | undefined {
  // featureOn() pairs a feature's name with settings of its own type.
  return on.find((entry) => entry.name === feature.name)?.settings as S | undefined;
}

/**
 * Joins the features to a service, in order. If one fails, those joined before it are let go
 * before the failure is thrown on.
 */
export async function joinAll(
  features: readonly FeatureOn[],
  service: ServiceScope,
): Promise<Joined[]> {
  const joined: Joined[] = [];
  try {
    for (const feature of features) joined.push(await feature.join(service));
  } catch (error) {
    await Promise.allSettled(joined.map((each) => each.close?.()));
    throw error;
  }
  return joined;
}

/**
 * What the joined features give the service's store, together: their observers as one (each
 * listener takes only what it needs, store-observer.ts), beside `observer`, the core's own.
 */
export function storeHooksOf(joined: readonly Joined[], observer?: StoreObserver): StoreHooks {
  const observers = [
    ...(observer === undefined ? [] : [observer]),
    ...joined.flatMap((each) => each.store?.observer ?? []),
  ];
  return {
    ...joined.reduce<StoreHooks>((hooks, each) => ({ ...hooks, ...each.store }), {}),
    observer:
      observers.length === 0
        ? undefined
        : observers.reduce<StoreObserver>((all, each) => ({ ...all, ...each }), {}),
  };
}
