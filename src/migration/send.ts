// Sends one replayed request to one target over a connection of its own, and reads the answer
// within bounds: at most BODY_KEPT_MAX bytes of a body are kept (the rest is hashed, so that two
// large bodies are still compared), and an answer must come within ANSWER_TIMEOUT_MS.
import { createHash } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import type { ReplayRequest } from './replay-request.js';

/** The bytes of one answer's body the kit keeps to compare; beyond, length and SHA-256 only. */
export const BODY_KEPT_MAX = 8 * 1024 * 1024;
export const ANSWER_TIMEOUT_MS = 30_000;

export interface Answer {
  readonly status: number;
  /** Lower-case names; a repeated header's values joined with ", " (Set-Cookie's too). */
  readonly headers: Readonly<Record<string, string>>;
  /** The body, or its first BODY_KEPT_MAX bytes when `truncated`. */
  readonly body: Buffer;
  readonly bodyLength: number;
  /** Set when the body was longer than BODY_KEPT_MAX: the whole body's SHA-256, in hex. */
  readonly truncated: { readonly sha256: string } | undefined;
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

function outgoingHeaders(base: URL, request: ReplayRequest): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = { Host: base.host };
  for (const { name, value } of request.headers) {
    const earlier = headers[name];
    headers[name] = earlier === undefined ? value : [earlier, value].flat();
  }
  if (request.body !== undefined) headers['Content-Length'] = String(request.body.length);
  return headers;
}

/** The answer of one target to one request; rejects when none comes (refused, reset, timed out). */
export function send(targetUrl: string, request: ReplayRequest): Promise<Answer> {
  const base = new URL(targetUrl);
  const prefix = base.pathname.replace(/\/$/, '');
  const requester = base.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const outgoing = requester(
      {
        host: base.hostname,
        port: base.port,
        method: request.method,
        path: `${prefix}${request.target}`,
        headers: outgoingHeaders(base, request),
        setHost: false,
        agent: false,
      },
      (response) => {
        const kept: Buffer[] = [];
        const hash = createHash('sha256');
        let length = 0;
        response.on('data', (chunk: Buffer) => {
          hash.update(chunk);
          const room = BODY_KEPT_MAX - length;
          if (room > 0) kept.push(room >= chunk.length ? chunk : chunk.subarray(0, room));
          length += chunk.length;
        });
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: flatHeaders(response.headers),
            body: Buffer.concat(kept),
            bodyLength: length,
            truncated: length > BODY_KEPT_MAX ? { sha256: hash.digest('hex') } : undefined,
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.setTimeout(ANSWER_TIMEOUT_MS, () =>
      outgoing.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS / 1000} s`)),
    );
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}

/** Undefined when a TCP connection to the target's address opens; else why not. */
export function unreachable(targetUrl: string): Promise<string | undefined> {
  const base = new URL(targetUrl);
  const port = Number(base.port || (base.protocol === 'https:' ? 443 : 80));
  return new Promise((resolve) => {
    const socket = connect({ host: base.hostname, port });
    socket.setTimeout(5_000, () => socket.destroy(new Error('no connection within 5 s')));
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('error', (error) => resolve(error.message));
  });
}
