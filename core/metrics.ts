/**
 * Each process's own Prometheus figures, as metric families: the parts
 * every process has (resident memory, event-loop delay), histograms fed from
 * hot paths without allocating, and figures sampled from counters the
 * process already keeps, read only when the cellappmgr asks for them.
 */
import { LOOP_DELAY_PERIOD_MS, LoopDelay } from "./loop_delay.ts";
import type { MetricFamily, MetricSample } from "./wire/mod.ts";

export type { MetricFamily, MetricSample } from "./wire/mod.ts";

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

/** One family as registered: read by `sample` each time the registry is collected. */
interface Family {
  name: string;
  help: string;
  type: MetricFamily["type"];
  sample: () => MetricSample[];
}

/**
 * A process's metric families by name, collected into `MetricFamily[]` (the
 * cellappmgr's wire shape) in the order they were registered. Kept here
 * rather than taken from prom-client, which costs every process that loads
 * it ~8 MB resident: only the cellappmgr, which renders the text, does.
 */
export class MetricRegistry {
  readonly #families = new Map<string, Family>();

  /**
   * Registers family `name`, whose samples `sample` reads when the registry
   * is collected (figures sampled from counters the process keeps anyway);
   * a name is registered once.
   */
  sampled(name: string, help: string, type: MetricFamily["type"], sample: () => MetricSample[]): void {
    if (this.#families.has(name)) throw new Error(`metric ${name} is already registered: each name has one family`);
    this.#families.set(name, { name, help, type, sample });
  }

  /** A counter `name`, its series told apart by `labelNames`. */
  counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    const c = new Counter<L>(labelNames);
    this.sampled(name, help, "counter", () => c.samples());
    return c;
  }

  /** A histogram `name` of one series, with upper bounds `bounds`. */
  histogram(name: string, help: string, bounds: readonly number[]): Buckets {
    const b = new Buckets(bounds);
    this.sampled(name, help, "histogram", () => b.samples(name, {}));
    return b;
  }

  /** Every family with its samples as of now. */
  collect(): MetricFamily[] {
    const out: MetricFamily[] = [];
    for (const f of this.#families.values()) out.push({ name: f.name, help: f.help, type: f.type, values: f.sample() });
    return out;
  }
}

/**
 * A counter's series, one per set of label values, in the order first
 * counted; an unlabelled counter has its one series (at 0) from the start.
 */
export class Counter<L extends string = never> {
  readonly #series = new Map<string, MetricSample>();

  constructor(readonly labelNames: readonly L[]) {
    if (labelNames.length === 0) this.#series.set("[]", { labels: {}, value: 0 });
  }

  /** Adds `by` (at least 0) to the series of `labels`. */
  inc(labels: Record<L, string | number> = {} as Record<L, string | number>, by = 1): void {
    if (!(by >= 0)) throw new Error(`a counter only goes up: cannot add ${by}`);
    const values = this.labelNames.map((n) => {
      const v = labels[n];
      if (v === undefined) throw new Error(`label ${n} has no value`);
      return v;
    });
    const key = JSON.stringify(values);
    const known = this.#series.get(key);
    if (known) known.value += by;
    else this.#series.set(key, { labels: { ...labels }, value: by });
  }

  /** Each series as a sample. */
  samples(): MetricSample[] {
    return [...this.#series.values()].map((s) => ({ labels: { ...s.labels }, value: s.value }));
  }
}

/** A process's registry, with its resident memory and event-loop delay. */
export class ProcessMetrics {
  readonly registry: MetricRegistry = new MetricRegistry();
  readonly #loop = new LoopDelay();

  /** The event-loop monitor: its delays, and whether the process stalled recently. */
  get loop(): LoopDelay {
    return this.#loop;
  }

  constructor() {
    this.#loop.start();
    const loop = this.#loop;
    this.registry.sampled(
      "seamless_process_resident_memory_bytes",
      "Resident set size of the process",
      "gauge",
      () => [
        { labels: {}, value: Deno.memoryUsage().rss },
      ],
    );
    this.registry.sampled("seamless_process_heap_used_bytes", "V8 heap in use", "gauge", () => [
      { labels: {}, value: Deno.memoryUsage().heapUsed },
    ]);
    this.registry.sampled("seamless_process_heap_total_bytes", "V8 heap committed (in use or not)", "gauge", () => [
      { labels: {}, value: Deno.memoryUsage().heapTotal },
    ]);
    this.registry.sampled(
      "seamless_process_external_memory_bytes",
      "Memory outside the V8 heap that JS objects hold (ArrayBuffers)",
      "gauge",
      () => [{ labels: {}, value: Deno.memoryUsage().external }],
    );
    this.registry.sampled(
      "seamless_event_loop_delay_seconds",
      `Event-loop delay since the previous scrape (quantile 1 is the maximum), sampled every ${LOOP_DELAY_PERIOD_MS} ms`,
      "gauge",
      () => {
        const values = [
          { labels: { quantile: "0.5" }, value: loop.percentile(50) },
          { labels: { quantile: "0.99" }, value: loop.percentile(99) },
          { labels: { quantile: "1" }, value: loop.max },
        ];
        loop.reset();
        return values;
      },
    );
  }

  /** Everything the registry holds, as sent to the cellappmgr. */
  families(): MetricFamily[] {
    return this.registry.collect();
  }

  /** Stops the event-loop monitor. */
  close(): void {
    this.#loop.stop();
  }
}
