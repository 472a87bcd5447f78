/**
 * A fuzzer for the process ports (cellappmgr, cellapp, baseapp): random and
 * mutated frames, before the handshake and, knowing the cluster secret, after
 * it under every role. Each input is accounted for: frames sent after the
 * handshake go in batches closed by a `ping`, and when the process drops the
 * connection the batch is replayed one frame per connection, so every input
 * is known to have been read by the process.
 */
import { MgrMsg, type Role } from "../../core/wire/mod.ts";
import { intIn, pick, rng } from "./random.ts";

import { benignInput, type Ctx, encodeFrame, hostileInput, preInput, samplesFor } from "./wire_inputs.ts";
import { batchAnswered, handshake, open, Raw, targetRole } from "./raw_conn.ts";

export { frame } from "./wire_inputs.ts";

/** What the wire fuzzer is pointed at. */
export interface WireFuzzOptions {
  /** HOST:PORT of the process port. */
  address: string;
  /** The cluster secret, to get past the handshake; null when the cluster has none. */
  secret: string | null;
  seed: number;
  /** Inputs to send. */
  count: number;
  /** Connections at once. */
  concurrency?: number;
  /** Stop early (with fewer inputs) after this long. */
  deadlineMs?: number;
  /** Share of connections that send one input before any handshake (default 0.15). */
  preHandshake?: number;
  /** Frames per batch after the handshake (default 16). */
  batch?: number;
}

/** What a fuzz run did. */
export interface WireFuzzReport {
  /** Inputs the process read (before or after the handshake). */
  inputs: number;
  connections: number;
  /** Connections the process closed before the batch's ping was answered. */
  dropped: number;
  ms: number;
  /** Why the process dropped connections (its `bye` reasons, numbers masked), most frequent first. */
  reasons: [string, number][];
}
/**
 * Fuzzes one process port until `count` inputs were read (or the deadline):
 * no input may hang the process or make it refuse the next connection.
 */
export async function fuzzWirePort(o: WireFuzzOptions): Promise<WireFuzzReport> {
  const r = rng(o.seed);
  const t0 = performance.now();
  const deadline = t0 + (o.deadlineMs ?? 600_000);
  const pre = o.preHandshake ?? 0.15;
  const batch = o.batch ?? 16;
  // An address that is no listener's: what the fuzzer claims to be.
  const ctx: Ctx = { self: `127.0.0.1:${intIn(r, 20_000, 60_000)}`, target: o.address, role: "cellapp" };
  const report: WireFuzzReport = { inputs: 0, connections: 0, dropped: 0, ms: 0, reasons: [] };
  const byes = new Map<string, number>();
  let reqIds = 100;
  const reqId = () => (reqIds = reqIds >= 0x7ffffff0 ? 100 : reqIds + 1);
  const left = () => o.count - report.inputs;
  const roles: Role[] = ["cellapp", "baseapp"];
  const target = await targetRole(o.address);
  const register = (role: Role) =>
    encodeFrame([MgrMsg.register.kind, reqId(), {
      role,
      pid: Deno.pid,
      address: ctx.self,
      previousId: null,
      clientUrl: null,
      startedAt: Date.now(),
      entityIdHighWater: 0,
    }]);

  const connect = async (): Promise<Raw> => {
    const raw = await open(o.address, byes);
    if (!raw) throw new Error(`${o.address} refused a connection after ${report.inputs} inputs`);
    report.connections++;
    return raw;
  };

  const preOne = async (input: Uint8Array) => {
    const raw = await connect();
    await raw.next(5000); // the challenge
    await raw.write(input);
    // The process reads the frame and answers, refuses, or waits for more bytes (then its handshake timeout ends it).
    await raw.next(20);
    raw.close();
    report.inputs++;
  };

  /**
   * Opens a channel as `role` and sends `frames` in batches, each closed by a
   * ping. Returns how many were read without harm, and how many of the next
   * were in the batch that lost the connection (one of them was fatal).
   * Null when the handshake was refused (the hello was the input read).
   */
  const session = async (role: Role, frames: Uint8Array[], last?: Uint8Array) => {
    const raw = await connect();
    try {
      if (!(await handshake(raw, role, ctx.self, o.secret))) {
        report.inputs++;
        return null;
      }
      // The cellappmgr hears a member only once it registered: most sessions do, first (not counted as an input).
      if (target === "cellappmgr" && role !== "tool" && !(await batchAnswered(raw, [register(role)], reqId()))) {
        return { read: 0, lost: 0 };
      }
      let read = 0;
      while (read < frames.length) {
        const now = frames.slice(read, read + batch);
        if (!(await batchAnswered(raw, now, reqId()))) {
          report.dropped++;
          return { read, lost: now.length };
        }
        read += now.length;
      }
      if (last) {
        // Meant to end the channel: it is read once the channel closes, or answers the ping after it.
        await batchAnswered(raw, [last], reqId());
        read++;
      }
      return { read, lost: 0 };
    } finally {
      raw.close();
    }
  };

  /** Sends `frames` as `role` until each is known to have been read, splitting batches that lost their connection. */
  const deliver = async (role: Role, frames: Uint8Array[], last?: Uint8Array): Promise<void> => {
    while (frames.length > 0 || last) {
      const res = await session(role, frames, last);
      if (res === null) return;
      report.inputs += res.read;
      if (res.lost === 0) return;
      const lost = frames.slice(res.read, res.read + res.lost);
      if (lost.length === 1) report.inputs++;
      else {
        const half = lost.length >> 1;
        await deliver(role, lost.slice(0, half));
        await deliver(role, lost.slice(half));
      }
      frames = frames.slice(res.read + res.lost);
    }
  };

  const worker = async () => {
    while (left() > 0 && performance.now() < deadline) {
      if (r() < pre) {
        await preOne(preInput(r, ctx));
        continue;
      }
      const role: Role = r() < 0.03 ? "tool" : pick(r, roles);
      const samples = samplesFor(role, target);
      const c = { ...ctx, role };
      const n = Math.min(intIn(r, 1, batch * 2), left());
      const frames = samples.length === 0 ? [] : Array.from({ length: n }, () => benignInput(r, c, samples, reqId));
      await deliver(role, frames, r() < 0.5 ? hostileInput(r, c, reqId) : undefined);
    }
  };
  await Promise.all(Array.from({ length: o.concurrency ?? 8 }, worker));
  report.ms = performance.now() - t0;
  report.reasons = [...byes].sort((a, b) => b[1] - a[1]).slice(0, 12);
  return report;
}
