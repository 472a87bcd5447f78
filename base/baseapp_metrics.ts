/**
 * A baseapp's metrics: logins and failed logins, KV commit latency, and its
 * clients' traffic (totals, and bytes and messages per client per second,
 * sampled once a second from the counters each session keeps).
 */
import { type Buckets, type Counter, type MetricSample, ProcessMetrics } from "../core/metrics.ts";
import type { ClientSession } from "./entity/mod.ts";
import type { LoginFailure } from "./login/mod.ts";

/** Most clients listed one by one (the busiest); the totals cover them all. */
export const MAX_CLIENT_SERIES = 500;

interface Rates {
  entity: number;
  account: string;
  bytesIn: number;
  bytesOut: number;
  framesIn: number;
  framesOut: number;
}

type Totals = { bytesIn: number; bytesOut: number; framesIn: number; framesOut: number };

/** The registry of a baseapp serving `sessions`, with the counters its login and storage paths bump. */
export class BaseAppMetrics extends ProcessMetrics {
  readonly #logins: Counter;
  readonly #failed: Counter<"reason">;
  readonly #commits: Buckets;
  /** Each live session's counters at the previous sample. */
  #last = new WeakMap<ClientSession, Totals>();
  /** Traffic of sessions that have closed, so the totals never go down. */
  #closed: Totals = { bytesIn: 0, bytesOut: 0, framesIn: 0, framesOut: 0 };
  #rates: Rates[] = [];
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(readonly sessions: ReadonlySet<ClientSession>) {
    super();
    const r = this.registry;
    this.#logins = r.counter("seamless_logins_total", "Logins that succeeded");
    this.#failed = r.counter(
      "seamless_failed_logins_total",
      "Logins refused: wrong_password, throttled (rate limits, back-off) or refused (anything else)",
      ["reason"],
    );
    for (const reason of ["wrong_password", "throttled", "refused"]) this.#failed.inc({ reason }, 0);
    this.#commits = r.histogram(
      "seamless_kv_commit_seconds",
      "Time a Deno KV commit of an entity's state took",
      [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    );
    r.sampled("seamless_clients", "Clients connected (logged in or not)", "gauge", () => [
      { labels: {}, value: this.sessions.size },
    ]);
    const total = (key: "bytes" | "frames") => (): MetricSample[] => {
      const t = this.#totals();
      return [
        { labels: { direction: "in" }, value: key === "bytes" ? t.bytesIn : t.framesIn },
        { labels: { direction: "out" }, value: key === "bytes" ? t.bytesOut : t.framesOut },
      ];
    };
    r.sampled("seamless_client_bytes_total", "Bytes from (in) and to (out) clients", "counter", total("bytes"));
    r.sampled("seamless_client_messages_total", "WebSocket frames from and to clients", "counter", total("frames"));
    const perClient = (key: "bytes" | "frames") => (): MetricSample[] =>
      this.#rates.flatMap((c) => [
        {
          labels: { entity: c.entity, account: c.account, direction: "in" },
          value: key === "bytes" ? c.bytesIn : c.framesIn,
        },
        {
          labels: { entity: c.entity, account: c.account, direction: "out" },
          value: key === "bytes" ? c.bytesOut : c.framesOut,
        },
      ]);
    r.sampled(
      "seamless_client_bytes_per_second",
      `Bytes per second from and to each logged-in client over the last second (the ${MAX_CLIENT_SERIES} busiest)`,
      "gauge",
      perClient("bytes"),
    );
    r.sampled(
      "seamless_client_messages_per_second",
      `WebSocket frames per second from and to each logged-in client (the ${MAX_CLIENT_SERIES} busiest)`,
      "gauge",
      perClient("frames"),
    );
    this.#timer = setInterval(() => this.#sample(), 1000);
  }

  /** Counts a login's outcome. */
  login(failure: LoginFailure | null): void {
    if (failure === null) this.#logins.inc();
    else this.#failed.inc({ reason: failure });
  }

  /** Counts one KV commit that took `seconds`. */
  commit(seconds: number): void {
    this.#commits.observe(seconds);
  }

  /** A session ended: its traffic stays in the totals. */
  sessionClosed(s: ClientSession): void {
    const t = this.#closed;
    t.bytesIn += s.stats.bytesIn;
    t.bytesOut += s.stats.bytesOut;
    t.framesIn += s.stats.framesIn;
    t.framesOut += s.stats.framesOut;
  }

  #totals(): Totals {
    const t = { ...this.#closed };
    for (const s of this.sessions) {
      t.bytesIn += s.stats.bytesIn;
      t.bytesOut += s.stats.bytesOut;
      t.framesIn += s.stats.framesIn;
      t.framesOut += s.stats.framesOut;
    }
    return t;
  }

  /** Once a second: each logged-in client's traffic since the previous sample. */
  #sample(): void {
    const rates: Rates[] = [];
    for (const s of this.sessions) {
      const now = s.stats;
      const before = this.#last.get(s);
      this.#last.set(s, {
        bytesIn: now.bytesIn,
        bytesOut: now.bytesOut,
        framesIn: now.framesIn,
        framesOut: now.framesOut,
      });
      if (!before || !s.proxy) continue;
      rates.push({
        entity: s.proxy.id,
        account: s.proxy.accountName,
        bytesIn: now.bytesIn - before.bytesIn,
        bytesOut: now.bytesOut - before.bytesOut,
        framesIn: now.framesIn - before.framesIn,
        framesOut: now.framesOut - before.framesOut,
      });
    }
    if (rates.length > MAX_CLIENT_SERIES) {
      rates.sort((a, b) => b.bytesIn + b.bytesOut - a.bytesIn - a.bytesOut);
      rates.length = MAX_CLIENT_SERIES;
    }
    this.#rates = rates;
  }

  override close(): void {
    clearInterval(this.#timer);
    super.close();
  }
}
