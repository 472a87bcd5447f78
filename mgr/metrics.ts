/**
 * GET /metrics: the cellappmgr asks every registered process for its figures
 * (ProcMsg.metrics), each within a timeout so that a stalled process cannot
 * stall the scrape, checks each answer, labels every sample with the process
 * it came from (role, id) and renders them all with prom-client.
 */
import { errorText } from "../core/errors.ts";
import { checkMetricFamilies, type MetricFamily, ProcMsg } from "../core/wire/mod.ts";
import type { ProcessMetrics } from "../core/metrics.ts";
import { type Logger, Throttle } from "../core/log.ts";
import type { Member } from "./registry.ts";

/** How long one process gets to answer a scrape. */
export const SCRAPE_TIMEOUT_MS = 2000;

/** One process's answer to a scrape. */
interface Gathered {
  role: string;
  id: number;
  families: MetricFamily[] | null;
  seconds: number;
}

/** Gathers and renders the cluster's metrics. */
export class MetricsGatherer {
  readonly #log: Logger;
  /** A process failing every scrape is logged once a minute, not at each scrape. */
  readonly #failLog = new Throttle(60_000);

  constructor(readonly own: ProcessMetrics, log: Logger, readonly timeoutMs: number = SCRAPE_TIMEOUT_MS) {
    this.#log = log;
  }

  /** The Prometheus text of the cellappmgr itself and every one of `members`. */
  async render(members: readonly Member[]): Promise<string> {
    const start = performance.now();
    const asked = members.map((m) => this.#ask(m));
    const families = this.own.families();
    const own: Gathered = { role: "cellappmgr", id: 0, families, seconds: (performance.now() - start) / 1000 };
    const answers = [own, ...await Promise.all(asked)];
    const labelled: MetricFamily[][] = answers.map((a) => a.families ? withProcess(a.families, a.role, a.id) : []);
    labelled.push([
      {
        name: "seamless_scrape_up",
        help: "Whether the process answered this scrape in time with valid metrics",
        type: "gauge",
        values: answers.map((a) => ({ labels: { role: a.role, process: a.id }, value: a.families ? 1 : 0 })),
      },
      {
        name: "seamless_scrape_seconds",
        help: "How long the process took to answer this scrape",
        type: "gauge",
        values: answers.map((a) => ({ labels: { role: a.role, process: a.id }, value: a.seconds })),
      },
    ]);
    // prom-client is loaded at the first scrape, not at start: a cluster nobody scrapes does not hold it
    // (docs/benchmarks.md#memory).
    const { default: client } = await import("prom-client");
    return await client.AggregatorRegistry.aggregate(this.#consistent(labelled)).metrics();
  }

  async #ask(m: Member): Promise<Gathered> {
    const start = performance.now();
    const done = (families: MetricFamily[] | null) => ({
      role: m.role,
      id: m.id,
      families,
      seconds: (performance.now() - start) / 1000,
    });
    try {
      const got: unknown = await m.channel.requestWithin(this.timeoutMs, ProcMsg.metrics);
      const bad = checkMetricFamilies(got);
      if (bad === null) return done(got as MetricFamily[]);
      this.#failed(m, `its answer is not valid: ${bad}`);
    } catch (e) {
      this.#failed(m, errorText(e));
    }
    return done(null);
  }

  #failed(m: Member, why: string): void {
    const held = this.#failLog.take(`${m.role} ${m.id}`);
    if (held === null) return;
    this.#log.warn(`metrics of ${m.role} ${m.id} (pid ${m.pid}) left out of the scrape: ${why}${Throttle.note(held)}`);
  }

  /**
   * Families by name, each once: a family that another process sends with a
   * different type is left out (logged), since one name has one type.
   */
  #consistent(all: MetricFamily[][]): (MetricFamily & { aggregator: string })[][] {
    const types = new Map<string, string>();
    return all.map((families) =>
      families.flatMap((f) => {
        const known = types.get(f.name);
        if (known === undefined) types.set(f.name, f.type);
        else if (known !== f.type) {
          this.#log.warn(`metric ${f.name} comes as a ${f.type} and as a ${known}; the ${f.type} is left out`);
          return [];
        }
        // Samples never collide (each carries its process), so summing is adding nothing to them.
        return [{ ...f, aggregator: "sum" }];
      })
    );
  }
}

/** `families` with every sample labelled with its process. */
function withProcess(families: MetricFamily[], role: string, id: number): MetricFamily[] {
  return families.map((f) => ({
    ...f,
    values: f.values.map((v) => ({ ...v, labels: { ...v.labels, role, process: id } })),
  }));
}
