// Who the rate limits count a request under: its peer, unless the peer is a trusted proxy; then the
// first address from the right of the one header the proxies set (--trust-proxy-header:
// X-Forwarded-For, or Forwarded) that is not a trusted proxy. What a client writes into either
// header itself is never believed.
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import {
  clientAddress,
  parseTrustedProxies,
  type ProxyHeader,
  type TrustedProxies,
} from '../../src/features/rate-limits/client-address.js';
import { forwardedElements } from '../../src/features/rate-limits/forwarded.js';

/** A request as node:http gives it, from `peer`, with its field lines in order (one per entry). */
function request(
  peer: string,
  headers: Record<string, string> | readonly (readonly [string, string])[] = {},
): IncomingMessage {
  const lines = Array.isArray(headers) ? headers : Object.entries(headers);
  const rawHeaders = lines.flat();
  return { socket: { remoteAddress: peer }, rawHeaders } as unknown as IncomingMessage;
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

describe('Forwarded read as RFC 7239 writes it', () => {
  const trusted = proxies('10.0.0.0/8', 'forwarded');
  const via = (forwarded: string): string =>
    clientAddress(request('10.0.0.1', { forwarded }), trusted);

  test('two for= in one element are malformed: the request counts as the proxy that wrote it, not as either name', () => {
    assert.equal(via('for=203.0.113.50;for=198.51.100.7'), '10.0.0.1');
    assert.equal(via('For=203.0.113.50;proto=http;FOR=198.51.100.7'), '10.0.0.1');
    // Behind a second trusted proxy (10.0.0.2, named by the first), the request counts as it.
    assert.equal(
      via('for=198.51.100.1, for=203.0.113.9;for=198.51.100.2, for=10.0.0.2'),
      '10.0.0.2',
    );
  });

  test('any parameter named twice in an element makes it malformed, as the RFC says', () => {
    assert.equal(via('for=203.0.113.50;proto=http;proto=https'), '10.0.0.1');
    assert.equal(via('for=203.0.113.50;by=10.0.0.1;proto=http'), '203.0.113.50');
  });

  test('a quoted string holding ";", "," or an escaped quote is one value, not more parameters or elements', () => {
    assert.equal(
      via('for=203.0.113.50;host="a;for=198.51.100.7,for=198.51.100.8"'),
      '203.0.113.50',
    );
    assert.equal(via('for="203.0.113.50";ext="x\\",for=198.51.100.7;y"'), '203.0.113.50');
    assert.deepEqual(forwardedElements('for="a\\"b\\\\c";proto=http, for=x'), [
      new Map([
        ['for', 'a"b\\c'],
        ['proto', 'http'],
      ]),
      new Map([['for', 'x']]),
    ]);
  });

  test('whitespace only around commas: elsewhere the element is malformed; empty list elements are ignored', () => {
    assert.equal(via('for=198.51.100.1 , \t for=203.0.113.50'), '203.0.113.50');
    assert.equal(via('for=198.51.100.1, , ,for=203.0.113.50,'), '203.0.113.50');
    assert.equal(via('for=203.0.113.50 ;proto=http'), '10.0.0.1');
    assert.equal(via('for= 203.0.113.50'), '10.0.0.1');
    assert.equal(via('for =203.0.113.50'), '10.0.0.1');
    // The element after a malformed one is read: a proxy that appends to the client's line is heard.
    assert.equal(via('for=198.51.100.7 junk, for=203.0.113.50'), '203.0.113.50');
  });

  test('an unterminated quoted string makes the rest of its line one malformed element; a later line is read on its own', () => {
    assert.equal(via('for="198.51.100.7, for=203.0.113.50'), '10.0.0.1');
    const req = request('10.0.0.1', [
      ['Forwarded', 'for="198.51.100.7'],
      ['Forwarded', 'for=203.0.113.50'],
    ]);
    assert.equal(clientAddress(req, trusted), '203.0.113.50');
  });

  test('unknown and obfuscated identifiers name no address: the walk stops at the proxy that wrote them', () => {
    assert.equal(via('for=unknown'), '10.0.0.1');
    assert.equal(via('for=UNKNOWN'), '10.0.0.1');
    assert.equal(via('for=_hidden'), '10.0.0.1');
    assert.equal(via('for="_hidden:_port"'), '10.0.0.1');
    assert.equal(via('for=198.51.100.1, for=_abc, for=10.0.0.2'), '10.0.0.2');
    // An obfuscated port hides the port only: the address is the client.
    assert.equal(via('for="203.0.113.50:_p1"'), '203.0.113.50');
    assert.equal(via('for="[2001:db8::7]:_p1"'), '2001:db8::7');
  });

  test('an element without for= names no address either', () => {
    assert.equal(via('for=198.51.100.1, proto=https'), '10.0.0.1');
  });

  test('a node outside the grammar is malformed: IPv6 and ports need quotes, IPv6 its brackets', () => {
    for (const node of [
      'for=[2001:db8::1]',
      'for=192.0.2.1:80',
      'for="2001:db8::1"',
      'for="[192.0.2.1]"',
      'for="192.0.2.1:123456"',
      'for="192.0.2.1:"',
      'for="[2001:db8::1]x"',
      'for="[2001:db8::1"',
      'for=example.com',
      'for=""',
    ])
      assert.equal(via(node), '10.0.0.1', node);
  });
});

describe('one client however its address is written', () => {
  const xff = proxies('10.0.0.0/8');
  const fwd = proxies('10.0.0.0/8', 'forwarded');
  const viaXff = (hop: string): string =>
    clientAddress(request('10.0.0.1', { 'x-forwarded-for': hop }), xff);
  const viaForwarded = (forwarded: string): string =>
    clientAddress(request('10.0.0.1', { forwarded }), fwd);

  test('an IPv6 address compressed, expanded, in upper case or mapping IPv4 is one key', () => {
    for (const hop of [
      '2001:db8::1',
      '2001:0db8:0000:0000:0000:0000:0000:0001',
      '2001:DB8::1',
      '2001:db8:0:0::1',
    ])
      assert.equal(viaXff(hop), '2001:db8::1', hop);
    for (const hop of ['::ffff:198.51.100.7', '::FFFF:c633:6407', '198.51.100.7'])
      assert.equal(viaXff(hop), '198.51.100.7', hop);
  });

  test('a zone id is dropped: it names an interface of ours, not the client', () => {
    assert.equal(viaXff('fe80::1%eth0'), 'fe80::1');
    assert.equal(viaXff('fe80::1%eth1'), 'fe80::1');
    assert.equal(viaForwarded('for="[fe80::1%eth7]"'), 'fe80::1');
    assert.equal(clientAddress(request('fe80::1%eth0'), undefined), 'fe80::1');
  });

  test('X-Forwarded-For names an address with its port dropped; anything else is no address', () => {
    assert.equal(viaXff('198.51.100.7:4711'), '198.51.100.7');
    assert.equal(viaXff('[2001:db8::1]:4711'), '2001:db8::1');
    assert.equal(viaXff('[2001:DB8::1]'), '2001:db8::1');
    // A trusted hop with a port is still trusted: the walk goes on past it.
    assert.equal(viaXff('198.51.100.7, 10.0.0.9:80'), '198.51.100.7');
    for (const hop of ['unknown', 'example.com', '198.51.100.7:x', '[198.51.100.7]:80', ''])
      assert.equal(viaXff(`198.51.100.1, ${hop}`), '10.0.0.1', hop);
  });

  test("Forwarded's for= names an address with its port dropped", () => {
    assert.equal(viaForwarded('for="[2001:db8::1]:4711"'), '2001:db8::1');
    assert.equal(viaForwarded('for="[2001:0DB8::0:1]"'), '2001:db8::1');
    assert.equal(viaForwarded('for="198.51.100.7:4711"'), '198.51.100.7');
    assert.equal(viaForwarded('for="[::ffff:198.51.100.7]"'), '198.51.100.7');
  });
});
