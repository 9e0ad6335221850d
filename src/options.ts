// Options as every part of the program declares and reads them: a name on the command line
// (--name), a variable in the environment (SVC_…), and its lines of --help. The command line is
// read once against every declared option (the core's in config.ts, each feature's in its own
// module), so that a feature's option is declared where it is used, and nothing between the two
// spells it again. Anything wrong stops the process with one line saying what (ConfigError).

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export interface OptionSpec {
  /** The option's name: `--name` on the command line. */
  readonly name: string;
  /** Its environment variable; undefined: the command line only (the feature reads standard variables itself). */
  readonly variable: string | undefined;
  /**
   * `switch` takes no value (its variable: 1 or true on, 0, false or empty off); `value` takes one;
   * `list` may be given several times, each a value (its variable: the values apart by spaces).
   */
  readonly takes: 'switch' | 'value' | 'list';
  /** Its lines of --help, from `--name` on, as they are printed. */
  readonly usage: string;
  /**
   * An option that was replaced: giving it (or setting its variable) stops the process with this
   * message, so that a deployment that still sets it does not lose what it asked for unseen. Not
   * in --help.
   */
  readonly refusal?: string;
}

/** A setting that was ignored, and why: told once, at start, as a warning (the service runs on). */
export interface SettingWarning {
  /** The option or variable (OTEL_TRACES_SAMPLER). */
  readonly setting: string;
  readonly message: string;
}

/** What an option was given, the command line first, then the environment. */
export interface OptionValues {
  /** A `value` option's text; undefined when neither the command line nor the variable sets it. */
  text(name: string): string | undefined;
  /** A switch: on when given, or when its variable is 1 or true. */
  on(name: string): boolean;
  /** A `list` option's values: those of the command line, else those of its variable. */
  list(name: string): readonly string[];
  /** The environment, for a feature that reads standard variables of its own (OTEL_*). */
  readonly env: NodeJS.ProcessEnv;
  /**
   * A setting ignored: where a standard says a bad value is warned of and ignored (the
   * OpenTelemetry SDK's variables), rather than stopping the process.
   */
  warn(warning: SettingWarning): void;
}

export interface ReadOptions {
  readonly values: OptionValues;
  /** The one argument that is not an option (the service to start), if any. */
  readonly operand: string | undefined;
}

/** Reads argv and the environment against the declared options; unknown or misused ones throw. */
export function readOptions(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  specs: readonly OptionSpec[],
  warn: (warning: SettingWarning) => void = () => undefined,
): ReadOptions {
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  const given = new Map<string, string[]>();
  let operand: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith('--')) {
      if (operand !== undefined) throw new ConfigError(`unexpected argument "${arg}"`);
      operand = arg;
      continue;
    }
    const [name, inline] = splitFlag(arg);
    const spec = byName.get(name);
    if (spec === undefined) throw new ConfigError(`unknown option --${name}`);
    if (spec.refusal !== undefined) throw new ConfigError(spec.refusal);
    if (spec.takes === 'switch' && inline !== undefined)
      throw new ConfigError(`--${name} takes no value`);
    const value = spec.takes === 'switch' ? '' : (inline ?? argv[++i]);
    if (value === undefined) throw new ConfigError(`--${name} needs a value`);
    const values = given.get(name) ?? [];
    if (spec.takes === 'value') values.length = 0;
    values.push(value);
    given.set(name, values);
  }
  for (const spec of specs) {
    const set = spec.variable !== undefined && (env[spec.variable] ?? '') !== '';
    if (spec.refusal !== undefined && set) throw new ConfigError(spec.refusal);
  }
  return { values: valuesOf(given, env, byName, warn), operand };
}

function valuesOf(
  given: ReadonlyMap<string, readonly string[]>,
  env: NodeJS.ProcessEnv,
  specs: ReadonlyMap<string, OptionSpec>,
  warn: (warning: SettingWarning) => void,
): OptionValues {
  const specOf = (name: string, takes: OptionSpec['takes']): OptionSpec => {
    const spec = specs.get(name);
    if (spec === undefined || spec.takes !== takes)
      throw new Error(`no ${takes} option --${name} is declared`);
    return spec;
  };
  // An empty variable counts as unset; an empty option value is a mistake.
  const variable = (spec: OptionSpec): string | undefined => {
    const value = spec.variable === undefined ? undefined : env[spec.variable];
    return value === '' ? undefined : value;
  };
  return {
    text(name) {
      const spec = specOf(name, 'value');
      const value = given.get(name)?.[0];
      if (value === '') throw new ConfigError(`--${name} needs a value`);
      return value ?? variable(spec);
    },
    on(name) {
      const spec = specOf(name, 'switch');
      return given.has(name) || (spec.variable !== undefined && switchOn(env, spec.variable));
    },
    list(name) {
      const spec = specOf(name, 'list');
      const values = given.get(name);
      if (values?.includes('') === true) throw new ConfigError(`--${name} needs a value`);
      if (values !== undefined) return values;
      return (variable(spec) ?? '').split(/\s+/).filter((value) => value !== '');
    },
    env,
    warn,
  };
}

/** An environment switch: 1 or true on, 0, false or empty off; anything else stops the process. */
export function switchOn(env: NodeJS.ProcessEnv, variable: string): boolean {
  const value = env[variable];
  if (value !== undefined && !['', '0', '1', 'true', 'false'].includes(value))
    throw new ConfigError(`${variable} must be 1 or 0`);
  return value === '1' || value === 'true';
}

function splitFlag(arg: string): [string, string | undefined] {
  const eq = arg.indexOf('=');
  return eq === -1 ? [arg.slice(2), undefined] : [arg.slice(2, eq), arg.slice(eq + 1)];
}

/** A whole number from `min` to `max`, or a ConfigError naming the option. */
export function parseBounded(text: string, flag: string, min: number, max: number): number {
  const value = /^\d{1,9}$/.test(text) ? Number(text) : NaN;
  if (!(value >= min && value <= max))
    throw new ConfigError(`${flag} must be a whole number from ${min} to ${max}, not "${text}"`);
  return value;
}

/** `on` or `off`, or a ConfigError naming the option. */
export function onOff(text: string, flag: string): boolean {
  if (text !== 'on' && text !== 'off')
    throw new ConfigError(`--${flag} must be on or off, not "${text}"`);
  return text === 'on';
}

/** The --help lines of the options, in the order given. */
export function usageOf(specs: readonly OptionSpec[]): string {
  return specs
    .filter((spec) => spec.refusal === undefined)
    .map((spec) => `  ${spec.usage.trimEnd()}\n`)
    .join('');
}
