// Structured logs with pino: one JSON object a line, in the shape log pipelines for Node expect
// (numeric `level`, epoch `time` in ms, `pid`, `hostname`, `msg`). Written to stdout through an
// asynchronous destination, so that a slow reader of stdout never blocks the event loop.
// Errors are written with their stack here and only here; a client never sees them.
import { Buffer } from 'node:buffer';
import { hostname } from 'node:os';
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import { jsonString } from '../common/json-string.js';

export type LogLevel = 'info' | 'warn' | 'error' | 'silent';
export type LogFields = Readonly<Record<string, unknown>>;

export interface Logger {
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** True when info lines are written: a hot path checks it before building a line. */
  readonly infoEnabled: boolean;
  /**
   * The line `info(message, fields)` writes, for a caller that has written the fields as JSON
   * members already (`,"key":value` each, in order; values are JSON text, by jsonString or, for a
   * string known to need no escape, as it is between quotes, or finite numbers; no serializer
   * applies to them). For the one line every request writes: pino's walk over a fields
   * object (a loop over each key and each string's characters, then a dozen string joins) cost a
   * logged `GET /todos/1` about a tenth of its instructions under valgrind (99k against 88k).
   * test/log.test.ts holds both forms to the same bytes. They differ only for a string holding a
   * lone UTF-16 surrogate, which JSON.stringify escapes and pino writes as U+FFFD; no field of the
   * access line can hold one (an HTTP request line is ASCII).
   */
  infoJson(message: string, members: string): void;
  /** A logger whose every line also carries `bindings`; they are serialized once, not per line. */
  child(bindings: LogFields): Logger;
  /**
   * Writes what is still pending, then lets go of the destination: the last call before the
   * process exits. Bounded, so that a stdout nobody reads cannot hold the exit forever.
   */
  close(): Promise<void>;
}

const CLOSE_WAIT_MS_MAX = 2_000;
/**
 * Lines are gathered up to this many bytes before one write, so that a busy server makes one
 * write for a hundred lines or more rather than one per request: each write wakes a thread of
 * libuv's pool, and on this project's virtual machines waking a thread costs the event loop more
 * than the rest of the line (a write every 4 KiB, about 15 access lines, cost a logged 422 about
 * 0.7 µs a request in a perf profile)…
 */
const LINES_BUFFERED_BYTES = 32 * 1024;
/** The size of the chunks sonic-boom gathers lines into (a larger single buffer stays whole); sonic-boom requires it above LINES_BUFFERED_BYTES. */
const LINES_WRITE_BYTES_MAX = 64 * 1024;
/** …and a quiet one still writes its lines within this time. */
const LINES_HELD_MS_MAX = 100;

/** Where lines go: whole lines, newline included, and a close() that waits for them to be out. */
interface LineSink {
  readonly write: (line: string) => void;
  readonly close: () => Promise<void>;
}

/** `write` replaces stdout (tests collect lines with it); it receives whole lines, newline included. */
export function createLogger(level: LogLevel, write?: (line: string) => void): Logger {
  const sink: LineSink =
    write === undefined ? stdoutLines() : { write, close: () => Promise.resolve() };
  const logger = pino(
    {
      level,
      serializers: { error: serializeError },
      // The defaults, stated: a line of ours always has these keys, whatever pino's next version
      // says.
      base: { pid: process.pid, hostname: hostname() },
      timestamp: pino.stdTimeFunctions.epochTime,
      messageKey: 'msg',
    },
    // Only write: pino would call a destination's flush(callback), which linesPerTurn's is not.
    { write: sink.write } satisfies DestinationStream,
  );
  return wrap(logger, sink.write, sink.close);
}

/** Lines to stdout through sonic-boom (pino's asynchronous destination), a turn's lines at a time. */
function stdoutLines(): LineSink {
  const stdout = pino.destination({
    dest: 1,
    sync: false,
    minLength: LINES_BUFFERED_BYTES,
    maxWrite: LINES_WRITE_BYTES_MAX,
    periodicFlush: LINES_HELD_MS_MAX,
    contentMode: 'buffer',
  });
  // Lines go to sonic-boom as bytes. Given a string, it measures the UTF-8 length of its whole
  // pending buffer again on every write (all it gathers before a write, and a whole chunk while a
  // write is out), so that each write costs as much as what came before it: with the access line
  // on, about a tenth of a `GET /todos/1`'s instructions (valgrind). Given bytes, it keeps lengths
  // as numbers. `contentMode: 'buffer'` is its documented option for bytes; its types declare only
  // the string form of write().
  const bytesOut = stdout as unknown as { write(bytes: Buffer): boolean };
  const turnLines = linesPerTurn((bytes) => {
    try {
      bytesOut.write(bytes);
    } catch {
      // sonic-boom refuses writes once it is closed: only a line logged while the process exits
      // comes here, with nowhere left to go. A throw here would end the process.
    }
  });
  // When the process exits, even after an uncaught exception, pino writes what sonic-boom holds
  // synchronously; the lines of the last turn must reach sonic-boom first. Prepended: pino's own
  // exit hook is registered already, by pino.destination().
  process.prependListener('exit', turnLines.flush);
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closed ??= new Promise((resolve) => {
      // process.exit() does not wait for a write still out in the thread pool; end() does.
      const timer = setTimeout(resolve, CLOSE_WAIT_MS_MAX);
      stdout.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      turnLines.flush();
      stdout.end();
    }));
  return { write: turnLines.write, close };
}

const INFO_LEVEL_PREFIX = `{"level":${pino.levels.values.info},"time":`;

/** The bindings of a logger and of its parents as pino has serialized them once: `,"pid":1,…`. */
function bindingsOf(logger: PinoLogger): string {
  return (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym] ?? '';
}

/**
 * Gathers the lines written during one turn of the event loop and hands them to `out` as one
 * buffer when the turn ends, in the order written: one UTF-8 copy and one call into sonic-boom a
 * turn, not one a line (a Buffer.from of a 250-byte line costs about 0.2 µs alone). Under load a
 * turn answers dozens of requests; a quiet server's line waits for the end of its turn, then for
 * sonic-boom's next write (LINES_HELD_MS_MAX at most). `flush()` hands over what is pending at once
 * (before the destination is closed, and when the process exits).
 */
export function linesPerTurn(out: (bytes: Buffer) => void): {
  readonly write: (line: string) => void;
  readonly flush: () => void;
} {
  // Kept as a list and joined once: join() makes one flat string, which Buffer.from measures and
  // copies on its fast path; a string grown by += is a rope, which it must walk (in a loop, 150
  // against 225 ns a 250-byte line).
  let pending: string[] = [];
  const flush = (): void => {
    if (pending.length === 0) return;
    const lines = pending;
    pending = [];
    out(Buffer.from(lines.join('')));
  };
  return {
    write(line) {
      if (pending.push(line) === 1) setImmediate(flush);
    },
    flush,
  };
}

function wrap(
  logger: PinoLogger,
  write: (line: string) => void,
  close: () => Promise<void>,
): Logger {
  const infoEnabled = logger.isLevelEnabled('info');
  const bindings = bindingsOf(logger);
  // The end of a line for the last message seen: the access line's is the same every time.
  let lastMessage: string | undefined;
  let lastEnd = '';
  // The start of a line (level, time, bindings) for the last millisecond seen: a busy server writes
  // many lines in one, and V8 writes an epoch time (a double, beyond small integers) by its general
  // number-to-text path. It and the end are joined into flat strings: one made with `+` is a tree
  // of its pieces, which each line would walk again when the turn's lines are copied out.
  let lastTime = -1;
  let lastStart = '';
  return {
    info: (message, fields) => logger.info(fields, message),
    warn: (message, fields) => logger.warn(fields, message),
    error: (message, fields) => logger.error(fields, message),
    infoJson: (message, members) => {
      if (!infoEnabled) return;
      if (message !== lastMessage) {
        lastMessage = message;
        lastEnd = [',"msg":', jsonString(message), '}\n'].join('');
      }
      const now = Date.now();
      if (now !== lastTime) {
        lastTime = now;
        lastStart = [INFO_LEVEL_PREFIX, now, bindings].join('');
      }
      write(`${lastStart}${members}${lastEnd}`);
    },
    infoEnabled,
    child: (childBindings) => wrap(logger.child(childBindings), write, close),
    close,
  };
}

function serializeError(value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  const code = (value as { code?: unknown }).code;
  return {
    name: value.name,
    code: typeof code === 'string' ? code : undefined,
    message: value.message,
    stack: value.stack,
  };
}
