// wrk tells only whether an answer's status was below 400; the server-bound part reads a service's
// exact statuses from the difference between two readings of its own http_requests_total.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { countsBetween, requestCounts } from '../../bench/metrics-statuses.js';

const EXPOSITION = `# HELP http_requests_total Requests answered, by service, method, route template and status
# TYPE http_requests_total counter
http_requests_total{service="todo",method="GET",route="/todos/{id}",status="200"} 1200
http_requests_total{service="todo",method="POST",route="/todos",status="422"} 30
http_requests_total{service="todo",method="GET",route="(unmatched)",status="404"} 7
http_requests_total{service="todo",method="GET",route="/metrics",status="200"} 3
http_request_duration_seconds_count{service="todo",method="GET",route="/todos/{id}",status="200"} 1200
`;

describe('statuses a service counted', () => {
  test('requests by status, over every route but the scrapes of /metrics, and no other metric', () => {
    assert.deepEqual([...requestCounts(EXPOSITION)], [
      [200, 1200],
      [422, 30],
      [404, 7],
    ]);
  });

  test('between two readings: only what changed, a status new in the second included', () => {
    const before = requestCounts(EXPOSITION);
    const after = requestCounts(EXPOSITION.replace('} 1200\n', '} 1500\n').replace('} 30\n', '} 30\nhttp_requests_total{service="todo",method="POST",route="/todos",status="500"} 2\n'));
    assert.deepEqual([...countsBetween(before, after)], [
      [200, 300],
      [500, 2],
    ]);
  });

  test('a request counter without a status is an error, not a request of no status', () => {
    assert.throws(() => requestCounts('http_requests_total{service="todo"} 1\n'), /without a status/);
  });
});
