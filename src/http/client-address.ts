// Who a request comes from, for the rate limits: the peer's address, or, when the peer is one of
// the proxies the service was told to trust (--trust-proxy), the address those proxies say they
// received it from (Forwarded, RFC 7239, else X-Forwarded-For). The list is read from the right:
// each trusted proxy appends the address it saw, so the first address that is not a trusted proxy
// is the client, and whatever stands to its left was written by the client and is not believed.
// A request from any other peer is its peer, whatever headers it sends.
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

export interface TrustedProxies {
  readonly list: BlockList;
  /** As given, for the start-up line. */
  readonly text: string;
}

/** Addresses and subnets (`10.0.0.0/8`, `::1`), comma-separated; or why not. */
export function parseTrustedProxies(text: string): TrustedProxies | string {
  const list = new BlockList();
  for (const item of text.split(',').map((part) => part.trim())) {
    const [address = '', prefixText, extra] = item.split('/');
    const family = isIP(address);
    const prefix = prefixText === undefined ? undefined : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
    const prefixMax = family === 6 ? 128 : 32;
    if (family === 0 || extra !== undefined || (prefix !== undefined && !(prefix >= 0 && prefix <= prefixMax))) {
      return `"${item}" is not an IP address or a subnet such as 10.0.0.0/8`;
    }
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, prefix, type);
  }
  return { list, text };
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

/** The addresses the proxies recorded, oldest first. */
function forwardedChain(req: IncomingMessage): string[] {
  const forwarded = req.headers.forwarded;
  if (forwarded !== undefined) {
    const chain: string[] = [];
    for (const element of forwarded.split(',')) {
      for (const pair of element.split(';')) {
        const eq = pair.indexOf('=');
        if (eq !== -1 && pair.slice(0, eq).trim().toLowerCase() === 'for') chain.push(forwardedNode(pair.slice(eq + 1)));
      }
    }
    return chain;
  }
  const xff = req.headers['x-forwarded-for'];
  if (xff === undefined) return [];
  return (Array.isArray(xff) ? xff.join(',') : xff).split(',').map((part) => part.trim());
}

/** The client of a request: its peer, or with trusted proxies the first untrusted address from the right. */
export function clientAddress(req: IncomingMessage, proxies: TrustedProxies | undefined): string {
  const peer = plain(req.socket.remoteAddress ?? '');
  if (proxies === undefined || !trusted(proxies, peer)) return peer;
  const chain = forwardedChain(req);
  for (let i = chain.length - 1; i >= 0; i--) {
    const hop = plain(chain[i] as string);
    // A proxy that wrote something other than an address: the last one we can vouch for is the client.
    if (isIP(hop) === 0) return i === chain.length - 1 ? peer : plain(chain[i + 1] as string);
    if (!trusted(proxies, hop)) return hop;
  }
  return chain.length === 0 ? peer : plain(chain[0] as string);
}
