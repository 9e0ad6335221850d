// Request metrics for Prometheus (prom-client), kept cheap on the request path. prom-client's own
// inc() and observe() validate and hash the label set on every call (about 3 µs for the pair on
// this project's machine, a fifth of a whole GET); here a request adds to plain numbers in its
// series, found by route, method and status (strings Node and the routes already hold, so no key
// is built), and prom-client reads those numbers only when /metrics is scraped. Cardinality stays
// bounded: the route label is a template, never a raw path.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The route label of every request that matched no route (404, 405, 307): one series, not one per path. */
export const UNMATCHED_ROUTE = 'unmatched';

type Label = 'service' | 'method' | 'route' | 'status';
const LABELS: readonly Label[] = ['service', 'method', 'route', 'status'];
/** Upper bounds in seconds: from a cached read (~0.1 ms) to a request near its time-out. */
export const DURATION_BUCKETS_S: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

interface Series {
  readonly labels: Readonly<Record<Label, string>>;
  /** The status as a number, as requests give it (its label is the same as text). */
  readonly status: number;
  count: number;
  sum: number;
  /** Per upper bound, the requests that took at most that long and more than the bound before. */
  readonly buckets: Float64Array;
}

const DURATION_HELP =
  'Time from receiving a request to handing its answer to the socket, by service, method, route template and status';

type HistogramData = Awaited<ReturnType<Histogram<Label>['get']>>;

export class RequestMetrics {
  /** Route → method → status → series. */
  private readonly byRoute = new Map<string, Map<string, Map<number, Series>>>();
  private readonly series: Series[] = [];
  /** The series of the request before: under load, one route answers many requests in a row. */
  private last: Series | undefined;
  private inFlight = 0;

  constructor(
    private readonly service: string,
    registry: Registry,
  ) {
    // prom-client calls collect() with `this` the metric: it reads these through closures instead.
    const { series } = this;
    const inFlight = (): number => this.inFlight;
    new Counter<Label>({
      name: 'http_requests_total',
      help: 'Requests answered, by service, method, route template and status',
      labelNames: LABELS,
      registers: [registry],
      collect() {
        this.reset();
        for (const each of series) this.inc(each.labels, each.count);
      },
    });
    new DurationHistogram(() => series, registry);
    new Gauge<'service'>({
      name: 'http_requests_in_flight',
      help: 'Requests received and not yet answered',
      labelNames: ['service'],
      registers: [registry],
      collect() {
        this.set({ service }, inFlight());
      },
    });
  }

  started(): void {
    this.inFlight += 1;
  }

  finished(method: string, route: string, status: number, seconds: number): void {
    this.inFlight -= 1;
    let series = this.last;
    if (
      series === undefined ||
      series.labels.route !== route ||
      series.labels.method !== method ||
      series.status !== status
    ) {
      series =
        this.byRoute.get(route)?.get(method)?.get(status) ?? this.newSeries(method, route, status);
      this.last = series;
    }
    series.count += 1;
    series.sum += seconds;
    for (let i = 0; i < DURATION_BUCKETS_S.length; i++) {
      if (seconds <= (DURATION_BUCKETS_S[i] as number)) {
        (series.buckets[i] as number) += 1;
        break;
      }
    }
  }

  private newSeries(method: string, route: string, status: number): Series {
    const series: Series = {
      labels: { service: this.service, method, route, status: String(status) },
      status,
      count: 0,
      sum: 0,
      buckets: new Float64Array(DURATION_BUCKETS_S.length),
    };
    let byMethod = this.byRoute.get(route);
    if (byMethod === undefined)
      this.byRoute.set(route, (byMethod = new Map<string, Map<number, Series>>()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map<number, Series>()));
    byStatus.set(status, series);
    this.series.push(series);
    return series;
  }
}

/**
 * A prom-client Histogram whose values are counted by RequestMetrics rather than by observe().
 * The registry asks a histogram for getForPromString() (the text format) or get() (JSON); both
 * read the series as they are at that moment.
 */
class DurationHistogram extends Histogram<Label> {
  constructor(
    private readonly current: () => Iterable<Series>,
    registry: Registry,
  ) {
    super({
      name: 'http_request_duration_seconds',
      help: DURATION_HELP,
      labelNames: LABELS,
      buckets: [...DURATION_BUCKETS_S],
      registers: [registry],
    });
  }

  override get(): Promise<HistogramData> {
    const name = 'http_request_duration_seconds';
    const values: HistogramData['values'] = [];
    for (const series of this.current()) {
      let cumulative = 0;
      DURATION_BUCKETS_S.forEach((bound, i) => {
        cumulative += series.buckets[i] as number;
        values.push({
          labels: { ...series.labels, le: bound } as HistogramData['values'][number]['labels'],
          value: cumulative,
          metricName: `${name}_bucket`,
        });
      });
      values.push(
        {
          labels: { ...series.labels, le: '+Inf' } as HistogramData['values'][number]['labels'],
          value: series.count,
          metricName: `${name}_bucket`,
        },
        { labels: series.labels, value: series.sum, metricName: `${name}_sum` },
        { labels: series.labels, value: series.count, metricName: `${name}_count` },
      );
    }
    // prom-client types `type` as a numeric enum, but its registry writes the string it holds at
    // run time into `# TYPE`; 'histogram' is what its own Histogram holds.
    return Promise.resolve({
      name,
      help: DURATION_HELP,
      type: 'histogram' as unknown as HistogramData['type'],
      values,
      aggregator: 'sum',
      collect: () => undefined,
    });
  }

  getForPromString(): Promise<HistogramData> {
    return this.get();
  }
}
