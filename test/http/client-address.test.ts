// Who the rate limits count a request under: its peer, unless the peer is a trusted proxy; then the
// first address from the right of Forwarded (or X-Forwarded-For) that is not a trusted proxy. What a
// client writes into those headers itself is never believed.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { clientAddress, parseTrustedProxies, type TrustedProxies } from '../../src/http/client-address.js';

function request(peer: string, headers: Record<string, string> = {}): IncomingMessage {
  return { socket: { remoteAddress: peer }, headers } as unknown as IncomingMessage;
}

function proxies(text: string): TrustedProxies {
  const parsed = parseTrustedProxies(text);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

test('without trusted proxies the client is the peer, whatever X-Forwarded-For or Forwarded say', () => {
  const forged = request('203.0.113.7', { 'x-forwarded-for': '198.51.100.1', forwarded: 'for=198.51.100.2' });
  assert.equal(clientAddress(forged, undefined), '203.0.113.7');
});

test('a forged X-Forwarded-For from a peer that is not a trusted proxy is ignored', () => {
  const forged = request('203.0.113.7', { 'x-forwarded-for': '198.51.100.1' });
  assert.equal(clientAddress(forged, proxies('10.0.0.0/8')), '203.0.113.7');
});

test('behind trusted proxies, the first untrusted address from the right is the client; what it wrote to its left is not believed', () => {
  const trusted = proxies('10.0.0.0/8,192.0.2.1');
  // The client sent "1.1.1.1" itself; the edge proxy (192.0.2.1) appended 198.51.100.9, the inner one 192.0.2.1.
  const req = request('10.1.2.3', { 'x-forwarded-for': '1.1.1.1, 198.51.100.9, 192.0.2.1' });
  assert.equal(clientAddress(req, trusted), '198.51.100.9');
});

test('Forwarded is read before X-Forwarded-For, with its quotes, brackets and ports', () => {
  const trusted = proxies('10.0.0.1');
  assert.equal(clientAddress(request('10.0.0.1', { forwarded: 'for="[2001:db8::7]:4711";proto=https', 'x-forwarded-for': '9.9.9.9' }), trusted), '2001:db8::7');
  assert.equal(clientAddress(request('10.0.0.1', { forwarded: 'for=192.0.2.60:8080, for=198.51.100.17' }), trusted), '198.51.100.17');
});

test('a trusted peer that forwards nothing is the client itself; an IPv4 peer over IPv6 is its IPv4 address', () => {
  assert.equal(clientAddress(request('::ffff:10.0.0.1'), proxies('10.0.0.1')), '10.0.0.1');
  assert.equal(clientAddress(request('::ffff:192.0.2.5'), undefined), '192.0.2.5');
});

test('a hop that is no address (a proxy wrote "unknown") stops the walk at the last address vouched for', () => {
  const req = request('10.0.0.1', { 'x-forwarded-for': '198.51.100.1, unknown' });
  assert.equal(clientAddress(req, proxies('10.0.0.1')), '10.0.0.1');
});

test('--trust-proxy takes addresses and subnets of either family, and refuses anything else', () => {
  assert.equal(typeof parseTrustedProxies('10.0.0.0/8, ::1, 2001:db8::/32, 192.0.2.1'), 'object');
  for (const text of ['10.0.0.0/33', 'localhost', '10.0.0.1/8/2', '::1/129', '']) {
    assert.match(parseTrustedProxies(text) as string, /is not an IP address or a subnet/, text);
  }
});
