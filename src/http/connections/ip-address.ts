// One client, one name. An IP address can be written many ways: IPv6 compressed or expanded, in
// upper or lower case, an IPv4 address mapped into IPv6 (`::ffff:192.0.2.1`, as a dual-stack socket
// shows an IPv4 peer), a link-local address with the zone of the interface it came by
// (`fe80::1%eth0`). Whatever counts clients (the rate limits, the connections one address may hold)
// keys them by the one canonical text of each address, or one client written four ways would be
// four clients, and a client that changes its zone a new one each time. The zone names an interface
// of the receiving host, not the client, so it is dropped.
import { isIP, SocketAddress } from 'node:net';

const MAPPED_PREFIX = '::ffff:';

/** The IPv4 address an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) stands for, if it is one. */
function mappedIPv4(canonicalV6: string): string | undefined {
  if (!canonicalV6.startsWith(MAPPED_PREFIX)) return undefined;
  const rest = canonicalV6.slice(MAPPED_PREFIX.length);
  return isIP(rest) === 4 ? rest : undefined;
}

/**
 * The canonical text of an IP address (RFC 5952 for IPv6, without a zone; an IPv4-mapped address as
 * its IPv4 address), or undefined if `text` is no IP address. isIP takes IPv4 only in dotted
 * decimal without leading zeros, a form with one spelling per address.
 */
export function canonicalAddress(text: string): string | undefined {
  const family = isIP(text);
  if (family === 4) return text;
  if (family === 0) return undefined;
  let address: string;
  try {
    address = new SocketAddress({ address: text, family: 'ipv6' }).address;
  } catch {
    return undefined;
  }
  return mappedIPv4(address) ?? address;
}

/**
 * A peer's address as the kernel gives it (`socket.remoteAddress`), as `canonicalAddress` would
 * write it, without parsing: the kernel writes IPv6 canonically already, and only an IPv4 peer on a
 * dual-stack socket or a link-local peer's zone need changing. Run for every connection.
 */
export function peerAddress(remoteAddress: string): string {
  if (!remoteAddress.includes(':')) return remoteAddress;
  const zone = remoteAddress.indexOf('%');
  const address = zone === -1 ? remoteAddress : remoteAddress.slice(0, zone);
  return mappedIPv4(address) ?? address;
}
