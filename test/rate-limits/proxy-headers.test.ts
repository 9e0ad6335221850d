// The client a proxy names is the client the limit counts, however the proxy's header is written:
// through the rate-limit stage of a real server behind a trusted proxy (the test itself, on
// 127.0.0.1), with a limit of 5, 30 requests whose header names one client in as many ways as it
// can be written are 5 admitted, and a header the client could have bent (two for= in one element,
// a quoted value holding ";" or ",") names no one it chose.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  parseTrustedProxies,
  type ProxyHeader,
} from '../../src/features/rate-limits/client-address.js';
import { send } from '../support/http.js';
import { withServer } from '../support/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const BURST = 5;
const REQUESTS = 30;

/** The statuses of GET /todos/1 sent once with each header value, through the trusted proxy 127.0.0.1. */
async function statuses(
  header: ProxyHeader,
  values: readonly string[],
  after: readonly string[] = [],
): Promise<{ sent: number[]; after: number[] }> {
  const trustedProxies = parseTrustedProxies('127.0.0.1', header);
  if (typeof trustedProxies === 'string') throw new Error(trustedProxies);
  const result = { sent: [] as number[], after: [] as number[] };
  await withServer(
    {
      service: 'todo',
      accessLog: false,
      rateLimiting: { limits: { reads: { perSecond: 0.001, burst: BURST } }, trustedProxies },
    },
    async (url) => {
      const get = async (value: string): Promise<number> =>
        (await send(url, { method: 'GET', path: '/todos/1', headers: [[header, value]] })).status;
      for (const value of values) result.sent.push(await get(value));
      for (const value of after) result.after.push(await get(value));
    },
  );
  return result;
}

const admitted = (codes: readonly number[]): number => codes.filter((s) => s === 200).length;
const many = (make: (i: number) => string): string[] =>
  Array.from({ length: REQUESTS }, (_, i) => make(i));

describe('proxy headers through the rate limit', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('a proxy that writes client text after its own for= (two for= in one element) admits 5 of 30, not 30', async () => {
    const { sent } = await statuses(
      'forwarded',
      many((i) => `for=203.0.113.50;for=198.51.100.${i}`),
    );
    assert.equal(admitted(sent), BURST);
  });

  test('a quoted value holding ",for=" and ";" is one value, not another element: 5 of 30, and the client is the one the proxy named', async () => {
    // Read as plain text split at its commas, the header's last element would be
    // for=198.51.100.i;x=" (a new client each time).
    const { sent, after } = await statuses(
      'forwarded',
      many((i) => `for=203.0.113.50;host="h,for=198.51.100.${i};x="`),
      ['for=203.0.113.50', 'for=198.51.100.1'],
    );
    assert.equal(admitted(sent), BURST);
    assert.deepEqual(after, [429, 200]);
  });

  test('one IPv6 client written four ways, with a zone or a port, in X-Forwarded-For: 5 of 30', async () => {
    const ways = (i: number): string[] => [
      '2001:db8::1',
      '2001:0db8:0000:0000:0000:0000:0000:0001',
      '2001:DB8::1',
      '2001:db8:0:0:0:0:0:1',
      `[2001:db8::1]:${4000 + i}`,
      `2001:db8::1%eth${i}`,
      `[2001:DB8::1%${i}]`,
    ];
    const { sent } = await statuses(
      'x-forwarded-for',
      many((i) => ways(i)[i % 7] as string),
    );
    assert.equal(admitted(sent), BURST);
  });

  test('an IPv4 client, as itself, mapped into IPv6 or with a port: 5 of 30', async () => {
    const ways = ['198.51.100.7', '::ffff:198.51.100.7', '::FFFF:C633:6407'];
    const { sent } = await statuses(
      'x-forwarded-for',
      many((i) => (i % 4 === 3 ? `198.51.100.7:${1024 + i}` : (ways[i % 4] as string))),
    );
    assert.equal(admitted(sent), BURST);
  });

  test('X-Forwarded-For: addr:port names the address, not the proxy: another client behind the same proxy is not refused', async () => {
    const { sent, after } = await statuses(
      'x-forwarded-for',
      many((i) => `203.0.113.50:${40000 + i}`),
      ['198.51.100.9:5555', '[2001:db8::9]:5555'],
    );
    assert.equal(admitted(sent), BURST);
    assert.deepEqual(after, [200, 200]);
  });

  test('Forwarded: for="[2001:db8::1]:4711" names 2001:db8::1, whatever its port and spelling: 5 of 30', async () => {
    const { sent, after } = await statuses(
      'forwarded',
      many((i) =>
        i % 2 === 0 ? `for="[2001:db8::1]:${4000 + i}"` : `for="[2001:0DB8::0:1]";proto=https`,
      ),
      ['for="[2001:db8::2]:4711"'],
    );
    assert.equal(admitted(sent), BURST);
    assert.deepEqual(after, [200]);
  });
});
