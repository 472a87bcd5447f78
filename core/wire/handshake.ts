/**
 * The channel handshake's decisions (docs/protocol.md, "Handshake"): the dialling
 * side answers a challenge with a hello carrying its proof of the secret and a
 * nonce of its own; the accepting side checks the hello's role, version and
 * proof before anything else of the peer is read, and answers with a welcome
 * proving the secret over the dialler's nonce, which the dialler checks before
 * it opens. Either side refuses a peer that does not prove the secret.
 */
import { ChannelMsg as C, type HelloInfo, type Role, type WelcomeInfo } from "./messages.ts";
import { reachableAddress } from "./address.ts";
import { makeProof, verifyProof } from "./secret.ts";
import { PROTOCOL_VERSION } from "../version.ts";

/** Who is at the other end of a channel, as it said in the handshake. */
export interface PeerInfo {
  role: Role;
  pid: number;
  address: string;
}

/** This side of a handshake: who it is and whom it will talk to. */
export interface HandshakeSide {
  role: Role;
  pid: number;
  address: string;
  secret: string | null;
  /** Accepting side: the roles a peer may have (null: any). */
  acceptRoles: readonly Role[] | null;
  /** Dialling side: the role the peer must have (null: any). */
  expectRoles: readonly Role[] | null;
  /** Dialling side: the address dialled, which names the peer from then on. */
  dialed: string | null;
}

/**
 * What to do with one handshake frame: send a reply, open the channel (after
 * sending `reply` when there is one), drop the peer for breaking the protocol
 * (`violation`), refuse it with a reason it is told (`refuse`), or close
 * because the peer refused this side (`refused`).
 */
export type HandshakeStep =
  | { reply: unknown[]; open?: PeerInfo }
  | { open: PeerInfo; reply?: undefined }
  | { violation: string }
  | { refuse: string }
  | { refused: string };

/** The dialling side's step for the frame `[kind, _, ...args]`, its hello carrying `nonce`. */
export async function dialStep(
  kind: number,
  args: unknown[],
  me: HandshakeSide,
  nonce: Uint8Array,
  remote: string,
): Promise<HandshakeStep> {
  if (kind === C.refuse.kind) return { refused: typeof args[0] === "string" ? args[0] : "no reason given" };
  if (kind === C.challenge.kind) {
    const bad = C.challenge.check(args);
    if (bad) return { violation: `bad handshake: challenge ${bad}` };
    const ch = args[0] as { role: Role; version: number; nonce: Uint8Array };
    if (ch.version !== PROTOCOL_VERSION) {
      return { violation: `protocol version mismatch: peer speaks ${ch.version}, this process ${PROTOCOL_VERSION}` };
    }
    const proof = me.secret === null
      ? null
      : await makeProof(me.secret, ch.nonce, "hello", me.role, me.pid, me.address);
    const hello: HelloInfo = {
      role: me.role,
      pid: me.pid,
      address: me.address,
      version: PROTOCOL_VERSION,
      proof,
      nonce,
    };
    return { reply: [C.hello.kind, 0, hello] };
  }
  if (kind === C.welcome.kind) {
    const bad = C.welcome.check(args);
    if (bad) return { violation: `bad handshake: welcome ${bad}` };
    const w = args[0] as WelcomeInfo;
    if (me.expectRoles && !me.expectRoles.includes(w.role)) {
      return { violation: `expected a ${me.expectRoles.join(" or ")} at ${remote}, found a ${w.role}` };
    }
    if (me.secret !== null && w.proof === null) {
      return { refuse: `the ${w.role} at ${remote} did not prove the cluster secret` };
    }
    if (me.secret === null && w.proof !== null) {
      return { refuse: `the ${w.role} at ${remote} has a cluster secret and this process none` };
    }
    if (me.secret !== null && !(await verifyProof(me.secret, nonce, "welcome", w.role, w.pid, w.address, w.proof!))) {
      return { refuse: `the ${w.role} at ${remote} does not know the cluster secret` };
    }
    return { open: { role: w.role, pid: w.pid, address: me.dialed ?? w.address } };
  }
  return { violation: `bad handshake: expected challenge or welcome, got kind ${kind}` };
}

/** The accepting side's step for the frame `[kind, _, ...args]`, having sent the challenge with `nonce`. */
export async function acceptStep(
  kind: number,
  args: unknown[],
  me: HandshakeSide,
  nonce: Uint8Array,
  remote: string,
): Promise<HandshakeStep> {
  if (kind === C.refuse.kind) return { refused: typeof args[0] === "string" ? args[0] : "no reason given" };
  if (kind !== C.hello.kind) return { violation: `bad handshake: expected hello, got kind ${kind}` };
  // The version first: a peer of another version may well send another hello.
  const version = (args[0] as { version?: unknown } | null)?.version;
  if (typeof version === "number" && version !== PROTOCOL_VERSION) {
    return { refuse: `protocol version mismatch: peer speaks ${version}, this process ${PROTOCOL_VERSION}` };
  }
  const bad = C.hello.check(args);
  if (bad) return { refuse: `bad handshake: hello ${bad}` };
  const hello = args[0] as HelloInfo;
  if (me.acceptRoles && !me.acceptRoles.includes(hello.role)) {
    return { refuse: `this ${me.role} accepts connections from ${me.acceptRoles.join(", ")}, not a ${hello.role}` };
  }
  if (hello.version !== PROTOCOL_VERSION) {
    return { refuse: `protocol version mismatch: peer speaks ${hello.version}, this process ${PROTOCOL_VERSION}` };
  }
  if (me.secret !== null && hello.proof === null) {
    return { refuse: "this cluster requires a secret and none was given" };
  }
  if (me.secret === null && hello.proof !== null) return { refuse: "this cluster has no secret but the peer sent one" };
  if (
    me.secret !== null &&
    !(await verifyProof(me.secret, nonce, "hello", hello.role, hello.pid, hello.address, hello.proof!))
  ) {
    return { refuse: "wrong cluster secret" };
  }
  const proof = me.secret === null
    ? null
    : await makeProof(me.secret, hello.nonce, "welcome", me.role, me.pid, me.address);
  const welcome: WelcomeInfo = { role: me.role, pid: me.pid, address: me.address, proof };
  return {
    reply: [C.welcome.kind, 0, welcome],
    open: { role: hello.role, pid: hello.pid, address: reachableAddress(hello.address, remote) },
  };
}
