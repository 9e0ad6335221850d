// Who a request comes from, for the rate limits: the peer's address, or, when the peer is one of
// the proxies the service was told to trust (--trust-proxy), the address those proxies say they
// received it from, in the one header the operator's proxy sets (--trust-proxy-header:
// X-Forwarded-For by default, or Forwarded, RFC 7239). The other header is ignored entirely: a
// proxy that appends X-Forwarded-For passes a client's own Forwarded through untouched, so
// believing it would let a client choose its name (and spend another's allowance). The list is
// read from the right: each trusted proxy appends the address it saw, so the first address that is
// not a trusted proxy is the client, and whatever stands to its left was written by the client and
// is not believed. A request from any other peer is its peer, whatever headers it sends.
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

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

/** An IPv4 address that came over IPv6 (`::ffff:10.0.0.1`) as the IPv4 address it is. */
function plain(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

function trusted(proxies: TrustedProxies, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && proxies.list.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** A `for=` value of Forwarded without its quotes, brackets and port (`"[2001:db8::1]:4711"`). */
function forwardedNode(value: string): string {
  const node = value.trim().replace(/^"(.*)"$/, '$1');
  const bracketed = /^\[([^\]]+)\]/.exec(node);
  if (bracketed !== null) return bracketed[1] as string;
  const colon = node.indexOf(':');
  return colon !== -1 && node.indexOf(':', colon + 1) === -1 ? node.slice(0, colon) : node;
}

/** The addresses the proxies recorded in `header`, oldest first; several lines of it are one list, in order. */
function forwardedChain(req: IncomingMessage, header: ProxyHeader): string[] {
  const value = req.headers[header];
  if (value === undefined) return [];
  const elements = (Array.isArray(value) ? value.join(',') : value).split(',');
  if (header === 'x-forwarded-for') return elements.map((part) => part.trim());
  const chain: string[] = [];
  for (const element of elements) {
    for (const pair of element.split(';')) {
      const eq = pair.indexOf('=');
      if (eq !== -1 && pair.slice(0, eq).trim().toLowerCase() === 'for')
        chain.push(forwardedNode(pair.slice(eq + 1)));
    }
  }
  return chain;
}

/** The client of a request: its peer, or with trusted proxies the first untrusted address from the right. */
export function clientAddress(req: IncomingMessage, proxies: TrustedProxies | undefined): string {
  const peer = plain(req.socket.remoteAddress ?? '');
  if (proxies === undefined || !trusted(proxies, peer)) return peer;
  const chain = forwardedChain(req, proxies.header);
  for (let i = chain.length - 1; i >= 0; i--) {
    const hop = plain(chain[i] as string);
    // A proxy that wrote something other than an address: the last one we can vouch for is the
    // client.
    if (isIP(hop) === 0) return i === chain.length - 1 ? peer : plain(chain[i + 1] as string);
    if (!trusted(proxies, hop)) return hop;
  }
  return chain.length === 0 ? peer : plain(chain[0] as string);
}
