// A body as the recorder keeps it: the first `max` bytes, and the length of the whole. Past the
// bound the body is recorded truncated and flagged (`_truncated`), so that memory stays bounded
// whatever a client or the service sends, and a replay knows it cannot send that body as it was.

const utf8 = new TextDecoder('utf-8', { fatal: true });

export class RecordedBody {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  /** The whole body's length in bytes. */
  length = 0;

  constructor(private readonly max: number) {}

  add(chunk: Buffer): void {
    this.length += chunk.length;
    const room = this.max - this.kept;
    if (room <= 0) return;
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks.push(part);
    this.kept += part.length;
  }

  get truncated(): boolean {
    return this.length > this.kept;
  }

  /** The kept bytes as HAR text: UTF-8 when they are, else base64. */
  text(): { readonly text: string; readonly base64: boolean } {
    const bytes = Buffer.concat(this.chunks);
    try {
      return { text: utf8.decode(bytes), base64: false };
    } catch {
      return { text: bytes.toString('base64'), base64: true };
    }
  }
}
