/**
 * A fuzzer for what only a cellappmgr sends (ProcMsg.reloadGame, the geometry in CellMsg.createCell and
 * updateGeometry, …): a process port refuses a cellappmgr, which speaks only on the link a member opened to it. So
 * the fuzzer is the cellappmgr a real cellapp or baseapp registers with: it takes the handshake's accepting side by
 * hand, answers the registration, then sends the samples a cellappmgr may send to that role, benign and mutated, in
 * batches closed by a ping. When the member drops the link on an input it comes back (it reconnects, as to a
 * restarted cellappmgr), and the fuzzer goes on: no input may crash or hang it.
 */
import { ChannelMsg, makeProof, MgrMsg, NONCE_BYTES, type Role } from "../../core/wire/mod.ts";
import { PROTOCOL_VERSION } from "../../core/version.ts";
import { intIn, pick, rng } from "./random.ts";
import { benignInput, type Ctx, encodeFrame, hostileInput, samplesFor } from "./wire_inputs.ts";
import { batchAnswered, Raw } from "./raw_conn.ts";
import type { WireFuzzReport } from "./wire.ts";

/** A cellappmgr port of the fuzzer's: members dial it and register; each registered link is handed out in turn. */
export class FakeMgr {
  readonly #listener: Deno.TcpListener;
  readonly #links: Raw[] = [];
  #waiting: ((raw: Raw) => void) | null = null;
  #generation = 0;
  /** The role of the member that registered last. */
  memberRole: Role | null = null;

  private constructor(listener: Deno.TcpListener, readonly secret: string | null) {
    this.#listener = listener;
    this.#accept();
  }

  /** Listens on a free loopback port. */
  static listen(secret: string | null): FakeMgr {
    return new FakeMgr(Deno.listen({ hostname: "127.0.0.1", port: 0 }), secret);
  }

  /** HOST:PORT, for the member's `--mgr`. */
  get address(): string {
    const a = this.#listener.addr as Deno.NetAddr;
    return `${a.hostname}:${a.port}`;
  }

  /** The next registered link; rejects when none comes within `timeoutMs`. */
  next(timeoutMs: number): Promise<Raw> {
    const ready = this.#links.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting = null;
        reject(new Error(`no member registered at ${this.address} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiting = (raw) => {
        clearTimeout(timer);
        resolve(raw);
      };
    });
  }

  /** Stops listening and closes the links not handed out. */
  close(): void {
    try {
      this.#listener.close();
    } catch {
      // already closed
    }
    for (const raw of this.#links.splice(0)) raw.close();
  }

  async #accept(): Promise<void> {
    try {
      for await (const conn of this.#listener) {
        conn.setNoDelay(true);
        this.#admit(new Raw(conn)).catch(() => conn.close());
      }
    } catch {
      // closed
    }
  }

  /** The accepting side of the handshake (core/wire/handshake.ts), then the answer to the member's registration. */
  async #admit(raw: Raw): Promise<void> {
    const nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
    await raw.write(
      encodeFrame([ChannelMsg.challenge.kind, 0, { role: "cellappmgr", version: PROTOCOL_VERSION, nonce }]),
    );
    const hello = await raw.next(5000) as [number, number, { role: Role; nonce: Uint8Array }] | symbol;
    if (!Array.isArray(hello) || hello[0] !== ChannelMsg.hello.kind) return raw.close();
    const proof = this.secret === null
      ? null
      : await makeProof(this.secret, hello[2].nonce, "welcome", "cellappmgr", Deno.pid, this.address);
    await raw.write(
      encodeFrame([ChannelMsg.welcome.kind, 0, { role: "cellappmgr", pid: Deno.pid, address: this.address, proof }]),
    );
    for (;;) {
      const m = await raw.next(5000);
      if (!Array.isArray(m)) return raw.close();
      if (m[0] !== MgrMsg.register.kind) continue;
      this.memberRole = (m[2] as { role: Role }).role;
      const reply = { id: 1, mgrPid: Deno.pid, generation: ++this.#generation, deadAfterMs: 600_000 };
      await raw.write(encodeFrame([ChannelMsg.reply.kind, m[1], reply]));
      break;
    }
    const waiting = this.#waiting;
    this.#waiting = null;
    if (waiting) waiting(raw);
    else this.#links.push(raw);
  }
}

/** What the link fuzzer does. */
export interface MgrLinkFuzzOptions {
  /** The cellappmgr the member registered with. */
  mgr: FakeMgr;
  seed: number;
  /** Inputs to send. */
  count: number;
  /**
   * Frames per batch (default 4: a member comes back after each drop in a tenth of a second or more, so that a
   * batch that lost the link, sent again frame by frame, costs a reconnection for each of its fatal frames).
   */
  batch?: number;
  /** Share of inputs that are hostile (any kind, random values, not msgpack; default 0.02); the rest benign. */
  hostile?: number;
  /** Longest wait for the member to come back after it dropped the link (default 10,000 ms). */
  comeBackMs?: number;
}

/**
 * Sends `count` inputs as the member's cellappmgr: every one is read (each batch is closed by a ping; a batch that
 * lost the link is sent again one frame per link), and the member comes back after each drop.
 */
export async function fuzzMgrLink(o: MgrLinkFuzzOptions): Promise<WireFuzzReport> {
  const r = rng(o.seed);
  const t0 = performance.now();
  const batch = o.batch ?? 4;
  const hostile = o.hostile ?? 0.02;
  const report: WireFuzzReport = { inputs: 0, connections: 0, dropped: 0, ms: 0, reasons: [] };
  const byes = new Map<string, number>();
  let reqIds = 100;
  const reqId = () => ++reqIds;
  let link: Raw | null = null;
  const connected = async (): Promise<Raw> => {
    if (link && !link.closed) return link;
    link = await o.mgr.next(o.comeBackMs ?? 10_000);
    report.connections++;
    return link;
  };
  const member = (await connected(), o.mgr.memberRole!);
  const samples = samplesFor("cellappmgr", member);
  if (samples.length === 0) throw new Error(`no samples a cellappmgr sends to a ${member}`);
  const ctx: Ctx = { self: o.mgr.address, target: "", role: "cellappmgr" };

  /** Sends `frames` on the link; how many were read before the link was lost, and whether it was. */
  const send = async (frames: Uint8Array[]): Promise<boolean> => {
    const raw = await connected();
    const ok = await batchAnswered(raw, frames, reqId());
    for (const [why, n] of raw.byes) byes.set(why, (byes.get(why) ?? 0) + n);
    raw.byes.clear();
    if (!ok) {
      raw.close();
      link = null;
      report.dropped++;
    }
    return ok;
  };

  while (report.inputs < o.count) {
    const n = Math.min(intIn(r, 1, batch), o.count - report.inputs);
    const frames = Array.from(
      { length: n },
      () => r() < hostile ? hostileInput(r, ctx, reqId) : benignInput(r, ctx, samples, reqId),
    );
    if (await send(frames)) {
      report.inputs += n;
      continue;
    }
    // One of them ended the link: each again on a link of its own, so that every input is known to be read.
    for (const f of frames) {
      await send([f]);
      report.inputs++;
    }
  }
  // The member still serves its cellappmgr.
  if (!(await send([encodeFrame([ChannelMsg.heartbeat.kind, 0, { load: pick(r, [0, 0.5]) }])]))) {
    throw new Error(`the ${member} did not answer its cellappmgr after ${report.inputs} inputs`);
  }
  o.mgr.close();
  link = null;
  report.ms = performance.now() - t0;
  report.reasons = [...byes].sort((a, b) => b[1] - a[1]).slice(0, 12);
  return report;
}
