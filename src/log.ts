// Structured logs: one JSON object a line, so that a request id can be searched for.
// Errors are written with their stack here and only here; a client never sees them.

export type LogLevel = 'info' | 'warn' | 'error' | 'silent';
const RANK: Record<LogLevel, number> = { info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: LogLevel, write: (line: string) => void = (line) => process.stdout.write(line)): Logger {
  const threshold = RANK[level];
  const emit = (lvl: LogLevel, message: string, fields?: Record<string, unknown>): void => {
    if (RANK[lvl] < threshold) return;
    let line: string;
    try {
      line = JSON.stringify({ time: new Date().toISOString(), level: lvl, message, ...fields }, errorFields);
    } catch {
      // A field that cannot be written (a cycle, say) must not turn logging into a crash.
      line = JSON.stringify({ time: new Date().toISOString(), level: lvl, message, unloggable: true });
    }
    write(`${line}\n`);
  };
  return {
    info: (message, fields) => emit('info', message, fields),
    warn: (message, fields) => emit('warn', message, fields),
    error: (message, fields) => emit('error', message, fields),
  };
}

function errorFields(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return { name: value.name, code: typeof code === 'string' ? code : undefined, message: value.message, stack: value.stack };
  }
  if (typeof value === 'bigint') return value.toString();
  return value;
}
