// How tracing's settings are read (options.ts, propagation-options.ts): each variable trimmed, an
// empty one taken as unset (as the specification says), and each value ignored kept as one warning
// line for the log, so that a bad fleet-wide setting is said once and never stops a service.
import type { SettingWarning } from '../../options.js';

export type { SettingWarning };

/** Reads the variables, keeping each warning for the one line it gets. */
export class SettingsReader {
  readonly warnings: SettingWarning[] = [];

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  /** A variable's value, trimmed; undefined when unset or empty (the specification reads both as unset). */
  get(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === '' ? undefined : value;
  }

  warn(setting: string, message: string): void {
    this.warnings.push({ setting, message: `${setting}: ${message}` });
  }

  /** A whole number within bounds: not one, its default; past the largest, the largest. */
  whole(name: string, fallback: number, min: number, max: number, maxIs = String(max)): number {
    const text = this.get(name);
    if (text === undefined) return fallback;
    const value = /^\d{1,15}$/.test(text) ? Number(text) : NaN;
    if (value > max) {
      this.warn(name, `${text} is more than ${maxIs}: ${max} used instead`);
      return max;
    }
    if (!(value >= min)) {
      this.warn(
        name,
        `"${text}" is not a whole number from ${min} to ${max}: the default, ${fallback}, used instead`,
      );
      return fallback;
    }
    return value;
  }
}

/** A comma-separated list of enumerated values: trimmed, lower-cased (they are case-insensitive), empty entries left out. */
export function listOf(text: string): string[] {
  return text
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '');
}
