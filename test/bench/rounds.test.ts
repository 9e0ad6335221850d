// The autocannon part says who set the pace of each round: the server's CPU time and the load
// generator's (the bench process, where autocannon runs) over the round's length, as shares of a
// core. Measured here against a real baseline process for one short round.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { measureSubjects } from '../../bench/rounds.js';
import { startBaseline } from '../../bench/servers.js';

describe('who set the pace of a round', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-rounds-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("each round gives the server's and the generator's CPU time as shares of a core, and the result their medians", { skip: !existsSync('/proc/self/stat') && 'needs /proc' }, async () => {
    const openapi = join(dir, 'openapi.json');
    writeFileSync(openapi, '{}');
    const server = await startBaseline('baseline', 'default', openapi);
    try {
      const [result] = await measureSubjects({ method: 'GET', path: '/todos/1' }, 200, [{ label: 'baseline', servers: [server] }], { rounds: 3, duration_s: 0.5, warmup_s: 0.5, connections: 10 });
      assert.ok(result !== undefined);
      assert.equal(result.wrongStatus, 0);
      for (const round of result.rounds) {
        // Both did work, and neither used more than the two cores of the machine (a share written
        // in the wrong unit, µs for s, would be a million times too large).
        assert.ok(round.serverCpuShare !== undefined && round.serverCpuShare > 0.01 && round.serverCpuShare <= 2.5, `server ${round.serverCpuShare}`);
        assert.ok(round.generatorCpuShare !== undefined && round.generatorCpuShare > 0.01 && round.generatorCpuShare <= 2.5, `generator ${round.generatorCpuShare}`);
      }
      const middle = (values: number[]): number => values.sort((a, b) => a - b)[1] as number;
      assert.equal(result.serverCpuShare, middle(result.rounds.map((r) => r.serverCpuShare as number)));
      assert.equal(result.generatorCpuShare, middle(result.rounds.map((r) => r.generatorCpuShare as number)));
    } finally {
      await server.stop();
    }
  });
});
