/**
 * A fuzzer for the baseapp's client endpoint: frames of random and mutated
 * client messages, before login and from logged-in players. Every few frames
 * a session sends a message whose answer is known (a second login, refused
 * with alreadyLoggedIn), so the inputs counted are the ones the baseapp is
 * known to have handled.
 */
import { ByteReader, ByteWriter } from "../../core/bytes/mod.ts";
import { makePose } from "../../core/geo/mod.ts";
import {
  AOI_MSG,
  C2S,
  type ClientMessage,
  encodeClientMessage,
  ErrorCode,
  readServerMessage,
  S2C,
  writeRequestUpdate,
} from "../../core/proto/mod.ts";
import { intIn, mutateBytes, NASTY_NUMBERS, pick, randomBytes, type Rng, rng } from "./random.ts";
import { type Client, connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";

/** What the client fuzzer is pointed at. */
export interface ClientFuzzOptions {
  /** ws://HOST:PORT/ of a baseapp. */
  url: string;
  seed: number;
  /** Client messages to send. */
  count: number;
  /** Logged-in sessions at once (accounts fuzz0, fuzz1, …, password "pw"). */
  sessions?: number;
  /** Stop early after this long. */
  deadlineMs?: number;
  /** Share of frames sent on fresh connections that never log in (default 0.03). */
  anonymous?: number;
}

/** What a client fuzz run did. */
export interface ClientFuzzReport {
  /** Client messages the baseapp is known to have handled. */
  inputs: number;
  frames: number;
  /** Error replies received. */
  errors: number;
  logins: number;
  ms: number;
}

const num = (r: Rng) => (r() < 0.2 ? pick(r, NASTY_NUMBERS) : (r() - 0.5) * 100);

/** One client message: mostly well-formed ones with odd values, sometimes a broken one. */
function message(r: Rng, self: number): Uint8Array {
  const roll = r();
  let m: ClientMessage;
  if (roll < 0.3) {
    m = { id: C2S.position, pose: makePose(num(r), num(r), num(r), num(r)) };
  } else if (roll < 0.5) {
    m = {
      id: C2S.callCell,
      target: r() < 0.5 ? self : intIn(r, 1, 400),
      typeId: intIn(r, 0, 3),
      method: intIn(r, 0, 6),
      args: randomBytes(r, intIn(r, 0, 12)),
    };
  } else if (roll < 0.62) {
    m = { id: C2S.callBase, method: intIn(r, 0, 6), args: randomBytes(r, intIn(r, 0, 12)) };
  } else if (roll < 0.67) {
    m = { id: C2S.enableEntities };
  } else if (roll < 0.8) {
    const w = new ByteWriter(16);
    writeRequestUpdate(
      w,
      intIn(r, 1, 400),
      intIn(r, 0, 3),
      Array.from({ length: intIn(r, 0, 4) }, () => intIn(r, 0, 1000)),
    );
    return r() < 0.2 ? mutateBytes(r, w.toBytes()) : w.toBytes();
  } else if (roll < 0.82) {
    m = {
      id: C2S.login,
      name: pick(r, ["", "x", "fuzz0", "a".repeat(70)]),
      password: "pw",
      spaceId: null,
      position: null,
    };
  } else if (roll < 0.9) {
    return mutateBytes(r, message(r, self));
  } else {
    const bytes = randomBytes(r, intIn(r, 1, 24));
    // Not a logout: that ends the session the fuzzer works through (one is sent on purpose now and then).
    if (bytes[0] === C2S.logout) bytes[0] = AOI_MSG.requestUpdate + 1;
    return bytes;
  }
  return encodeClientMessage(m);
}

/** The answer a session waits for after each burst: its second login is refused. */
const SYNC = encodeClientMessage({ id: C2S.login, name: "sync", password: "pw", spaceId: null, position: null });

/** A connection that never logs in: counts the error replies it gets. */
class Ws {
  readonly ws: WebSocket;
  readonly open: Promise<boolean>;
  closed = false;
  errors = 0;
  #waiters: (() => void)[] = [];

  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.ws.binaryType = "arraybuffer";
    this.open = new Promise((res) => {
      this.ws.onopen = () => res(true);
      this.ws.onerror = () => res(false);
    });
    this.ws.onclose = () => {
      this.closed = true;
      this.#wake();
    };
    this.ws.onmessage = (ev) => {
      if (!(ev.data instanceof ArrayBuffer)) return;
      const r = new ByteReader(new Uint8Array(ev.data));
      // Before login the server sends only error replies.
      while (r.remaining > 0 && r.u8() === S2C.error) {
        try {
          readServerMessage(r, S2C.error);
          this.errors++;
        } catch {
          break;
        }
      }
      this.#wake();
    };
  }

  send(bytes: Uint8Array): boolean {
    if (this.closed || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(bytes);
    return true;
  }

  /** Waits until `cond` holds, the socket closes, or `ms` pass. */
  async until(cond: () => boolean, ms: number): Promise<boolean> {
    const deadline = performance.now() + ms;
    while (!cond() && !this.closed && performance.now() < deadline) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((res) => {
        this.#waiters.push(res);
        timer = setTimeout(res, Math.max(0, deadline - performance.now()));
      });
      clearTimeout(timer);
    }
    return cond();
  }

  close(): void {
    try {
      this.ws.close();
    } catch {
      // closing already
    }
  }

  #wake(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }
}

/** Concatenates messages into one frame, staying under `max` bytes. */
function frameOf(parts: Uint8Array[], max: number): Uint8Array {
  let n = 0;
  const used: Uint8Array[] = [];
  for (const p of parts) {
    if (n + p.length > max) break;
    used.push(p);
    n += p.length;
  }
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of used) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Fuzzes a baseapp's client endpoint until `count` client messages were
 * handled (or the deadline). A session that the baseapp closes (a logout the
 * fuzzer sent, abuse) logs in again.
 */
export async function fuzzClientPort(o: ClientFuzzOptions): Promise<ClientFuzzReport> {
  const r = rng(o.seed);
  const t0 = performance.now();
  const deadline = t0 + (o.deadlineMs ?? 600_000);
  const report: ClientFuzzReport = { inputs: 0, frames: 0, errors: 0, logins: 0, ms: 0 };
  const anonymous = o.anonymous ?? 0.03;
  const left = () => o.count - report.inputs;

  /** A player through the SDK (which reads the AOI traffic the fuzzed player causes), counting its error replies. */
  const login = async (name: string) => {
    for (let tries = 0; tries < 20 && performance.now() < deadline; tries++) {
      try {
        const c = await connect(o.url, { name, password: "pw" }, { registry });
        report.logins++;
        const counts = { errors: 0, synced: 0 };
        c.on("error", (code) => {
          counts.errors++;
          if (code === ErrorCode.alreadyLoggedIn) counts.synced++;
        });
        return { c, counts };
      } catch {
        // Refused (a guard's back-off, a busy queue): wait a little and try again.
        await new Promise((res) => setTimeout(res, 200 * (tries + 1)));
      }
    }
    return null;
  };

  /** Resolves once `cond` holds, or false when the client closed or `ms` passed. */
  const until = async (c: Client, cond: () => boolean, ms: number) => {
    const end = performance.now() + ms;
    while (!cond() && !c.closed && performance.now() < end) await new Promise((res) => setTimeout(res, 2));
    return cond();
  };

  const anonymousFrame = async () => {
    const ws = new Ws(o.url);
    if (!(await ws.open)) throw new Error(`${o.url} refused a connection after ${report.inputs} inputs`);
    const parts = Array.from({ length: intIn(r, 1, 6) }, () => message(r, 1));
    const f = frameOf(parts.filter((p) => p[0] !== C2S.login), 1024);
    ws.send(f);
    report.frames++;
    // Each message before login is answered (notLoggedIn, or a malformed one ends the frame): wait for one answer.
    await ws.until(() => ws.errors > 0, 2000);
    report.errors += ws.errors;
    report.inputs += Math.max(1, ws.errors);
    ws.close();
  };

  const session = async (k: number) => {
    let p: Awaited<ReturnType<typeof login>> = null;
    while (left() > 0 && performance.now() < deadline) {
      if (r() < anonymous) {
        await anonymousFrame();
        continue;
      }
      if (!p || p.c.closed) {
        p = await login(`fuzz${k}`);
        if (!p) throw new Error(`fuzz${k} could not log in`);
      }
      const { c, counts } = p;
      let sent = 0;
      for (let i = 0; i < 8 && left() - sent > 0; i++) {
        const parts = Array.from({ length: intIn(r, 1, 8) }, () => message(r, c.player.id));
        if (r() < 0.002) parts.push(encodeClientMessage({ id: C2S.logout }));
        c.sendFrame(frameOf(parts, 60 * 1024));
        report.frames++;
        sent += parts.length;
      }
      const errorsBefore = counts.errors, want = counts.synced + 1;
      c.sendFrame(SYNC);
      if (await until(c, () => counts.synced >= want, 10_000)) report.inputs += sent;
      report.errors += counts.errors - errorsBefore;
    }
    p?.c.close();
  };
  await Promise.all(Array.from({ length: o.sessions ?? 4 }, (_, k) => session(k)));
  report.ms = performance.now() - t0;
  return report;
}
