// Who the rate limits count a request under: its peer, unless the peer is a trusted proxy; then the
// first address from the right of the one header the proxies set (--trust-proxy-header:
// X-Forwarded-For, or Forwarded) that is not a trusted proxy. What a client writes into either
// header itself is never believed.
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import {
  clientAddress,
  parseTrustedProxies,
  type ProxyHeader,
  type TrustedProxies,
} from '../../src/features/rate-limits/client-address.js';

function request(peer: string, headers: Record<string, string> = {}): IncomingMessage {
  return { socket: { remoteAddress: peer }, headers } as unknown as IncomingMessage;
}

function proxies(text: string, header?: ProxyHeader): TrustedProxies {
  const parsed = parseTrustedProxies(text, header);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

test('without trusted proxies the client is the peer, whatever X-Forwarded-For or Forwarded say', () => {
  const forged = request('203.0.113.7', {
    'x-forwarded-for': '198.51.100.1',
    forwarded: 'for=198.51.100.2',
  });
  assert.equal(clientAddress(forged, undefined), '203.0.113.7');
});

test('a forged X-Forwarded-For from a peer that is not a trusted proxy is ignored', () => {
  const forged = request('203.0.113.7', { 'x-forwarded-for': '198.51.100.1' });
  assert.equal(clientAddress(forged, proxies('10.0.0.0/8')), '203.0.113.7');
});

test('behind trusted proxies, the first untrusted address from the right is the client; what it wrote to its left is not believed', () => {
  const trusted = proxies('10.0.0.0/8,192.0.2.1');
  // The client sent "1.1.1.1" itself; the edge proxy (192.0.2.1) appended 198.51.100.9, the inner
  // one 192.0.2.1.
  const req = request('10.1.2.3', { 'x-forwarded-for': '1.1.1.1, 198.51.100.9, 192.0.2.1' });
  assert.equal(clientAddress(req, trusted), '198.51.100.9');
});

test('behind a proxy that appends X-Forwarded-For (the default header), a Forwarded the client sent itself is ignored entirely', () => {
  const trusted = proxies('10.0.0.1');
  assert.equal(trusted.header, 'x-forwarded-for');
  // The client 203.0.113.50 names a victim in Forwarded; the proxy appended its address to
  // X-Forwarded-For.
  const req = request('10.0.0.1', {
    forwarded: 'for=198.51.100.99',
    'x-forwarded-for': '203.0.113.50',
  });
  assert.equal(clientAddress(req, trusted), '203.0.113.50');
  // With no X-Forwarded-For at all, a Forwarded does not name the client either: the proxy is the
  // client.
  assert.equal(
    clientAddress(request('10.0.0.1', { forwarded: 'for=198.51.100.99' }), trusted),
    '10.0.0.1',
  );
});

test('behind a proxy that appends Forwarded (--trust-proxy-header forwarded), an X-Forwarded-For the client sent is ignored entirely', () => {
  const trusted = proxies('10.0.0.1', 'forwarded');
  const req = request('10.0.0.1', {
    'x-forwarded-for': '198.51.100.99',
    forwarded: 'for=203.0.113.50;proto=https',
  });
  assert.equal(clientAddress(req, trusted), '203.0.113.50');
  assert.equal(
    clientAddress(request('10.0.0.1', { 'x-forwarded-for': '198.51.100.99' }), trusted),
    '10.0.0.1',
  );
});

test('forged leftmost entries of the chosen header are not believed, in either header, nor the other header at all', () => {
  const xff = proxies('10.0.0.0/8');
  const forgedBoth = {
    forwarded: 'for=198.51.100.97',
    'x-forwarded-for': '198.51.100.99, 198.51.100.98, 203.0.113.50, 10.0.0.7',
  };
  assert.equal(clientAddress(request('10.0.0.1', forgedBoth), xff), '203.0.113.50');
  const fwd = proxies('10.0.0.0/8', 'forwarded');
  assert.equal(
    clientAddress(
      request('10.0.0.1', {
        forwarded: 'for=198.51.100.99, for="203.0.113.50:4711";proto=http, for=10.0.0.7',
      }),
      fwd,
    ),
    '203.0.113.50',
  );
});

test('Forwarded is read with its quotes, brackets and ports', () => {
  const trusted = proxies('10.0.0.1', 'forwarded');
  assert.equal(
    clientAddress(
      request('10.0.0.1', { forwarded: 'for="[2001:db8::7]:4711";proto=https' }),
      trusted,
    ),
    '2001:db8::7',
  );
  assert.equal(
    clientAddress(
      request('10.0.0.1', { forwarded: 'for=192.0.2.60:8080, for=198.51.100.17' }),
      trusted,
    ),
    '198.51.100.17',
  );
});

test('several lines of the chosen header are one list, in their order; lines of the other header are ignored', async () => {
  const seen: string[] = [];
  const choices = {
    'x-forwarded-for': proxies('127.0.0.1'),
    forwarded: proxies('127.0.0.1', 'forwarded'),
  } as const;
  const server = createServer((req, res) => {
    seen.push(
      clientAddress(req, choices[req.url === '/forwarded' ? 'forwarded' : 'x-forwarded-for']),
    );
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const send = (
    path: string,
    name: string,
    lines: string[],
    other: Record<string, string[]> = {},
  ): Promise<void> =>
    new Promise((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, path, agent: false, headers: { ...other, [name]: lines } },
        (res) => res.resume().on('end', resolve),
      );
      req.on('error', reject).end();
    });
  try {
    // The client's own line first, then the ones its proxies added: the last untrusted is the
    // client.
    await send('/xff', 'X-Forwarded-For', ['198.51.100.99', '203.0.113.50'], {
      Forwarded: ['for=198.51.100.97', 'for=198.51.100.98'],
    });
    await send('/forwarded', 'Forwarded', ['for=198.51.100.99', 'for=203.0.113.50']);
    // A later line is further right than an earlier one: the trusted hop in the second line is
    // skipped.
    await send('/xff', 'X-Forwarded-For', ['198.51.100.99, 203.0.113.51', '127.0.0.1']);
  } finally {
    server.close();
  }
  assert.deepEqual(seen, ['203.0.113.50', '203.0.113.50', '203.0.113.51']);
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
