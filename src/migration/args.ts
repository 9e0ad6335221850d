// The options of `diff` and `record`, read from the command line alone: `--name value` or
// `--name=value`, and switches without a value. A wrong option is one line, as the services' own
// options are (src/config.ts), and the command exits 2.

/** A command line the kit cannot run, said in one line. */
export class UsageError extends Error {}

export interface ArgsSpec {
  readonly values: readonly string[];
  readonly switches: readonly string[];
}

export interface ParsedArgs {
  readonly values: ReadonlyMap<string, string>;
  readonly switches: ReadonlySet<string>;
}

export function parseArgs(argv: readonly string[], spec: ArgsSpec): ParsedArgs {
  const values = new Map<string, string>();
  const switches = new Set<string>();
  for (let at = 0; at < argv.length; at++) {
    const word = argv[at] as string;
    const match = /^--([a-z][a-z-]*)(?:=(.*))?$/s.exec(word);
    if (match === null) throw new UsageError(`unexpected argument ${JSON.stringify(word)}`);
    const name = match[1] as string;
    if (spec.switches.includes(name)) {
      if (match[2] !== undefined) throw new UsageError(`--${name} takes no value`);
      switches.add(name);
      continue;
    }
    if (!spec.values.includes(name)) throw new UsageError(`unknown option --${name}`);
    const value = match[2] ?? argv[++at];
    if (value === undefined || (match[2] === undefined && value.startsWith('--')))
      throw new UsageError(`--${name} needs a value`);
    if (values.has(name)) throw new UsageError(`--${name} is given twice`);
    values.set(name, value);
  }
  return { values, switches };
}

/** A value that must be there. */
export function required(args: ParsedArgs, name: string): string {
  const value = args.values.get(name);
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

/** An http:// or https:// URL, without its trailing slash. */
export function targetUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(
      `--${name} must be an http:// or https:// URL, not ${JSON.stringify(value)}`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(
      `--${name} must be an http:// or https:// URL, not ${JSON.stringify(value)}`,
    );
  if (url.search !== '' || url.hash !== '')
    throw new UsageError(`--${name} must be a URL without a query or fragment`);
  return value.replace(/\/+$/, '');
}

/** A whole number in [min, max]. */
export function integer(name: string, value: string, min: number, max: number): number {
  const number = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(number) || number < min || number > max)
    throw new UsageError(
      `--${name} must be a whole number from ${min} to ${max}, not ${JSON.stringify(value)}`,
    );
  return number;
}
