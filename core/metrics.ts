/**
 * Each process's own Prometheus figures (prom-client registries): the parts
 * every process has (resident memory, event-loop delay), histograms fed from
 * hot paths without allocating, and figures sampled from counters the
 * process already keeps, read only when the cellappmgr asks for them.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import client from "prom-client";
import type { MetricFamily, MetricSample } from "./wire/metrics.ts";

export type { MetricFamily, MetricSample } from "./wire/metrics.ts";

/** Tick time buckets (seconds): a 10 Hz tick has a 100 ms budget. */
export const TICK_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

/**
 * A histogram's counts kept in fixed arrays, so that observing (each tick)
 * allocates nothing; turned into Prometheus samples only when scraped.
 */
export class Buckets {
  readonly #counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.#counts = new Float64Array(bounds.length + 1);
  }

  /** Counts one observation of `v`. */
  observe(v: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && v > b[i]) i++;
    this.#counts[i]++;
    this.sum += v;
    this.count++;
  }

  /** The samples of a histogram `name` with `labels`: cumulative buckets, sum and count. */
  samples(name: string, labels: Record<string, string | number>): MetricSample[] {
    const out: MetricSample[] = [];
    let acc = 0;
    for (let i = 0; i <= this.bounds.length; i++) {
      acc += this.#counts[i];
      const le = i < this.bounds.length ? this.bounds[i] : "+Inf";
      out.push({ labels: { ...labels, le }, value: acc, metricName: `${name}_bucket` });
    }
    out.push({ labels, value: this.sum, metricName: `${name}_sum` });
    out.push({ labels, value: this.count, metricName: `${name}_count` });
    return out;
  }
}

/**
 * Registers a family whose samples `sample` reads when the registry is
 * collected: figures sampled from counters the process keeps anyway.
 */
export function sampled(
  registry: client.Registry,
  name: string,
  help: string,
  type: MetricFamily["type"],
  sample: () => MetricSample[],
): void {
  registry.registerMetric({
    name,
    get: () => Promise.resolve({ name, help, type, values: sample(), aggregator: "sum" }),
  } as unknown as client.Metric);
}

/** A process's registry, with its resident memory and event-loop delay. */
export class ProcessMetrics {
  readonly registry: client.Registry = new client.Registry();
  readonly #loop = monitorEventLoopDelay({ resolution: 10 });

  constructor() {
    this.#loop.enable();
    const loop = this.#loop;
    sampled(
      this.registry,
      "seamless_process_resident_memory_bytes",
      "Resident set size of the process",
      "gauge",
      () => [
        { labels: {}, value: Deno.memoryUsage().rss },
      ],
    );
    sampled(this.registry, "seamless_process_heap_used_bytes", "V8 heap in use", "gauge", () => [
      { labels: {}, value: Deno.memoryUsage().heapUsed },
    ]);
    sampled(
      this.registry,
      "seamless_event_loop_delay_seconds",
      "Event-loop delay since the previous scrape (quantile 1 is the maximum), sampled every 10 ms",
      "gauge",
      () => {
        // The monitor reports a huge minimum until its first sample.
        const seen = loop.count > 0;
        const q = (p: number) => seen ? loop.percentile(p) / 1e9 : 0;
        const values = [
          { labels: { quantile: "0.5" }, value: q(50) },
          { labels: { quantile: "0.99" }, value: q(99) },
          { labels: { quantile: "1" }, value: seen ? loop.max / 1e9 : 0 },
        ];
        loop.reset();
        return values;
      },
    );
  }

  /** Everything the registry holds, as sent to the cellappmgr: only labels, value and metricName per sample. */
  async families(): Promise<MetricFamily[]> {
    const got = await this.registry.getMetricsAsJSON();
    return got.map((m) => ({
      name: m.name,
      help: m.help,
      type: String(m.type) as MetricFamily["type"],
      values: m.values.map((v) => {
        const s: MetricSample = { labels: { ...v.labels } as Record<string, string | number>, value: v.value };
        const metricName = (v as { metricName?: string }).metricName;
        if (metricName !== undefined) s.metricName = metricName;
        return s;
      }),
    }));
  }

  /** Stops the event-loop monitor. */
  close(): void {
    this.#loop.disable();
  }
}
