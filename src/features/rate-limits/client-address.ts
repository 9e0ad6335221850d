// Who a request comes from, for the rate limits: the peer's address, or, when the peer is one of
// the proxies the service was told to trust (--trust-proxy), the address those proxies say they
// received it from, in the one header the operator's proxy sets (--trust-proxy-header:
// X-Forwarded-For by default, or Forwarded, RFC 7239). The other header is ignored entirely: a
// proxy that appends X-Forwarded-For passes a client's own Forwarded through untouched, so
// believing it would let a client choose its name (and spend another's allowance). The list is
// read from the right: each trusted proxy appends the address it saw, so the first address that is
// not a trusted proxy is the client, and whatever stands to its left was written by the client and
// is not believed. A hop that names no address (`unknown`, an obfuscated identifier, a malformed
// element such as one with two `for=`) ends the walk: the client is the last address vouched for,
// the proxy that wrote that hop, so that nothing a client writes into a hop can make it someone
// else. A request from any other peer is its peer, whatever headers it sends. Every address is
// keyed in its canonical form (http/ip-address.ts).
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { canonicalAddress, peerAddress } from '../../http/connections/ip-address.js';
import { forwardedElements, MALFORMED, nodeAddress } from './forwarded.js';

/** The header a trusted proxy names the client in (--trust-proxy-header). */
export type ProxyHeader = 'x-forwarded-for' | 'forwarded';
export const PROXY_HEADERS: readonly ProxyHeader[] = ['x-forwarded-for', 'forwarded'];
export const PROXY_HEADER_DEFAULT: ProxyHeader = 'x-forwarded-for';

export interface TrustedProxies {
  readonly list: BlockList;
  /** As given, for the start-up line. */
  readonly text: string;
  /** The only header read for the client. */
  readonly header: ProxyHeader;
}

/** Addresses and subnets (`10.0.0.0/8`, `::1`), comma-separated; or why not. */
export function parseTrustedProxies(
  text: string,
  header: ProxyHeader = PROXY_HEADER_DEFAULT,
): TrustedProxies | string {
  const list = new BlockList();
  for (const item of text.split(',').map((part) => part.trim())) {
    const [address = '', prefixText, extra] = item.split('/');
    const family = isIP(address);
    const prefix =
      prefixText === undefined
        ? undefined
        : /^\d{1,3}$/.test(prefixText)
          ? Number(prefixText)
          : NaN;
    const prefixMax = family === 6 ? 128 : 32;
    if (
      family === 0 ||
      extra !== undefined ||
      (prefix !== undefined && !(prefix >= 0 && prefix <= prefixMax))
    ) {
      return `"${item}" is not an IP address or a subnet such as 10.0.0.0/8`;
    }
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, prefix, type);
  }
  return { list, text, header };
}

function trusted(proxies: TrustedProxies, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && proxies.list.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** The values of every field line named `name` (lower case), in order. */
function fieldLines(req: IncomingMessage, name: string): string[] {
  const lines: string[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const field = raw[i] as string;
    if (field.length === name.length && field.toLowerCase() === name)
      lines.push(raw[i + 1] as string);
  }
  return lines;
}

/**
 * An X-Forwarded-For hop's address: an IPv4 or IPv6 address, bare or with a port (`192.0.2.1:4711`,
 * `[2001:db8::1]:4711`, `[2001:db8::1]`), canonical; undefined for anything else (`unknown`, a
 * name, an empty hop).
 */
function xffAddress(hop: string): string | undefined {
  const text = hop.trim();
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    const rest = text.slice(close + 1);
    const inside = text.slice(1, close);
    return close !== -1 && isIP(inside) === 6 && /^(:\d{1,5})?$/.test(rest)
      ? canonicalAddress(inside)
      : undefined;
  }
  const colon = text.indexOf(':');
  if (colon !== -1 && colon === text.lastIndexOf(':')) {
    const host = text.slice(0, colon);
    return isIP(host) === 4 && /^\d{1,5}$/.test(text.slice(colon + 1)) ? host : undefined;
  }
  return canonicalAddress(text);
}

/** What each hop of the Forwarded lines names, oldest first: an address, or undefined for none. */
function forwardedHops(lines: readonly string[]): (string | undefined)[] {
  const hops: (string | undefined)[] = [];
  for (const line of lines) {
    for (const element of forwardedElements(line)) {
      const node = element === MALFORMED ? undefined : element.get('for');
      hops.push(node === undefined ? undefined : nodeAddress(node));
    }
  }
  return hops;
}

/** The hops the proxies recorded in `header`, oldest first; several lines of it are one list, in order. */
function forwardedChain(req: IncomingMessage, header: ProxyHeader): (string | undefined)[] {
  const lines = fieldLines(req, header);
  if (header === 'forwarded') return forwardedHops(lines);
  return lines.flatMap((line) => line.split(',')).map(xffAddress);
}

/**
 * The client of a request: its peer, or with trusted proxies the first untrusted address from the
 * right; at a hop that names no address, the last address vouched for.
 */
export function clientAddress(req: IncomingMessage, proxies: TrustedProxies | undefined): string {
  const peer = peerAddress(req.socket.remoteAddress ?? '');
  if (proxies === undefined || !trusted(proxies, peer)) return peer;
  const hops = forwardedChain(req, proxies.header);
  let vouched = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i];
    if (hop === undefined) return vouched;
    if (!trusted(proxies, hop)) return hop;
    vouched = hop;
  }
  return vouched;
}
