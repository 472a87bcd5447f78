/** A connection to a process port driven by hand: the handshake, frames, and batches closed by a ping. */
import { ChannelMsg, FrameReader, NONCE_BYTES, NONE, type Role } from "../../core/wire/mod.ts";
import { makeProof } from "../../core/wire/mod.ts";
import { PROTOCOL_VERSION } from "../../core/version.ts";

import { encodeFrame } from "./wire_inputs.ts";

/** A raw connection with a frame reader, for talking the handshake by hand. */
export class Raw {
  readonly reader = new FrameReader(1 << 20);
  closed = false;
  /** The role the process announced in its challenge. */
  peerRole: Role | null = null;

  /** `byes` collects why the process said goodbye, by reason with numbers masked. */
  constructor(readonly conn: Deno.TcpConn, readonly byes: Map<string, number> = new Map()) {}

  async next(timeoutMs: number): Promise<unknown> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const f = this.reader.next();
      if (f !== NONE) return f;
      const left = deadline - performance.now();
      if (left <= 0) return NONE;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const n = await Promise.race([
        this.conn.read(this.reader.space()).catch(() => null),
        new Promise<"timeout">((res) => timer = setTimeout(() => res("timeout"), left)),
      ]);
      clearTimeout(timer);
      if (n === "timeout") return NONE;
      if (n === null) {
        this.closed = true;
        return NONE;
      }
      this.reader.commit(n);
    }
  }

  async write(bytes: Uint8Array): Promise<boolean> {
    try {
      let off = 0;
      while (off < bytes.length) off += await this.conn.write(bytes.subarray(off));
      return true;
    } catch {
      this.closed = true;
      return false;
    }
  }

  close(): void {
    try {
      this.conn.close();
    } catch {
      // already closed
    }
  }
}

export async function open(address: string, byes?: Map<string, number>): Promise<Raw | null> {
  const [host, port] = [address.replace(/:\d+$/, "").replace(/^\[|\]$/g, ""), Number(address.split(":").pop())];
  try {
    const conn = await Deno.connect({ hostname: host, port });
    conn.setNoDelay(true);
    return new Raw(conn, byes);
  } catch {
    return null;
  }
}

/** Reads the challenge and answers with a hello as `role` (with a proof when there is a secret); false when refused. */
export async function handshake(raw: Raw, role: Role, self: string, secret: string | null): Promise<boolean> {
  const challenge = await raw.next(5000);
  if (!Array.isArray(challenge) || challenge[0] !== ChannelMsg.challenge.kind) return false;
  const nonce = (challenge[2] as { nonce: Uint8Array }).nonce;
  raw.peerRole = (challenge[2] as { role: Role }).role;
  const proof = secret === null ? null : await makeProof(secret, nonce, "hello", role, Deno.pid, self);
  const mine = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
  await raw.write(
    encodeFrame([ChannelMsg.hello.kind, 0, {
      role,
      pid: Deno.pid,
      address: self,
      version: PROTOCOL_VERSION,
      proof,
      nonce: mine,
    }]),
  );
  const welcome = await raw.next(5000);
  return Array.isArray(welcome) && welcome[0] === ChannelMsg.welcome.kind;
}

/** The role a process port announces in its challenge. */
export async function targetRole(address: string): Promise<Role> {
  const raw = await open(address);
  if (!raw) throw new Error(`cannot connect to ${address}`);
  try {
    const challenge = await raw.next(5000);
    if (!Array.isArray(challenge) || challenge[0] !== ChannelMsg.challenge.kind) {
      throw new Error(`${address} did not send a challenge`);
    }
    return (challenge[2] as { role: Role }).role;
  } finally {
    raw.close();
  }
}

/** Sends `frames` then a ping; true when the ping was answered (so every frame was read and none was fatal). */
export async function batchAnswered(raw: Raw, frames: Uint8Array[], pingId: number): Promise<boolean> {
  // One write for the batch and its ping.
  const ping = encodeFrame([ChannelMsg.ping.kind, pingId]);
  const all = new Uint8Array(frames.reduce((n, f) => n + f.length, ping.length));
  let at = 0;
  for (const f of [...frames, ping]) {
    all.set(f, at);
    at += f.length;
  }
  if (!(await raw.write(all))) return false;
  for (;;) {
    const m = await raw.next(10_000);
    if (m === NONE) return false;
    if (!Array.isArray(m)) continue;
    if (m[0] === ChannelMsg.reply.kind && m[1] === pingId) return true;
    if (m[0] === ChannelMsg.bye.kind) {
      const why = String(m[2]).replace(/\d+/g, "N").slice(0, 120);
      raw.byes.set(why, (raw.byes.get(why) ?? 0) + 1);
    }
  }
}
