// A HAR file written as it grows: the file is a whole HAR from the start (no entries), and each
// flush writes the entries recorded since the last one over the file's closing brackets, then the
// brackets again. So the recorder holds only the entries not yet written, and the file on disk is
// a HAR a replay can read after every flush (a crash in the middle of a write may cut its end).
// A write that fails (a full disk) loses its entries, counted in `entriesLost`, and leaves the
// file as it was: the next write starts where that one did.
import { open, type FileHandle } from 'node:fs/promises';
import type { HarEntry } from './har.js';

const TAIL = '\n]}}\n';

export class HarFileWriter {
  private pending: string[] = [];
  private pendingBytes = 0;
  private written = 0;
  private lost = 0;
  /** Where the closing brackets start. */
  private end: number;
  private flushing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly file: FileHandle,
    head: string,
  ) {
    this.end = Buffer.byteLength(head);
  }

  /** Creates (or empties) the file and writes an empty HAR into it. */
  static async create(path: string, creator: string, version: string): Promise<HarFileWriter> {
    const file = await open(path, 'w');
    const head = `{"log":{"version":"1.2","creator":${JSON.stringify({ name: creator, version })},"pages":[],"entries":[\n`;
    await file.write(head + TAIL, 0);
    return new HarFileWriter(file, head);
  }

  add(entry: HarEntry): void {
    const text = JSON.stringify(entry);
    this.pending.push(text);
    this.pendingBytes += text.length;
  }

  /** The bytes of the entries not yet written (as UTF-16 units, near enough for a bound). */
  get bytesPending(): number {
    return this.pendingBytes;
  }

  /** Entries written to the file so far. */
  get entriesWritten(): number {
    return this.written;
  }

  /** Entries a failed write lost. */
  get entriesLost(): number {
    return this.lost;
  }

  /**
   * Writes the pending entries; flushes run one after another. Resolves with the error of a write
   * that failed, whose entries are lost; never rejects.
   */
  flush(): Promise<Error | undefined> {
    const done = this.flushing.then(() => this.writePending());
    this.flushing = done.then(() => undefined);
    return done;
  }

  private async writePending(): Promise<Error | undefined> {
    if (this.pending.length === 0) return undefined;
    const entries = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    const text = (this.written === 0 ? '' : ',\n') + entries.join(',\n');
    const bytes = Buffer.from(text + TAIL);
    try {
      await this.file.write(bytes, 0, bytes.length, this.end);
      await this.file.truncate(this.end + bytes.length);
    } catch (error) {
      this.lost += entries.length;
      // What a failed write left past the brackets is cut, so that the file stays a HAR.
      await this.file.write(TAIL, this.end).catch(() => undefined);
      await this.file.truncate(this.end + Buffer.byteLength(TAIL)).catch(() => undefined);
      return error instanceof Error ? error : new Error(String(error));
    }
    this.end += bytes.length - Buffer.byteLength(TAIL);
    this.written += entries.length;
    return undefined;
  }

  /** Writes what is pending and closes the file; resolves with the error of the last write, if it failed. */
  async close(): Promise<Error | undefined> {
    const error = await this.flush();
    await this.file.close().catch(() => undefined);
    return error;
  }
}
