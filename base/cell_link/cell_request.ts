/**
 * A base asks the cellappmgr for its cell entity, through the cellappmgr's
 * outages: while it is away the request waits for it to be back, and a
 * request whose channel died unanswered is asked again on the new one (the
 * cellapp answers a repeated request with the entity it made the first
 * time). A refusal (no such space, ...) is final and comes back as the
 * cellappmgr's RemoteError.
 */
import {
  type CellEntitySpec,
  type CellPlaceRequest,
  type Channel,
  ChannelClosedError,
  MgrMsg,
} from "../../core/wire/mod.ts";
import type { Logger } from "../../core/log.ts";

/** The link to the cellappmgr as a cell entity request uses it (core/wire MgrLink). */
export interface MgrAccess {
  readonly channel: Channel | null;
  /** The channel once registered on it; rejects when `signal` aborts. */
  connected(signal?: AbortSignal): Promise<Channel>;
}

/** Where the cell entity was made. */
export interface CellEntityPlace {
  spaceId: number;
  cellappAddress: string;
  /** Where it was put, when a script's placement chose (near an entity, in a new space). */
  position?: [number, number, number];
}

/** How long the cellappmgr may take to answer one request (it may make a space first). */
const ANSWER_MS = 15_000;

/**
 * Asks for the cell entity `spec` describes (placed as a script's `place` asks, when given) and resolves with where
 * it is; stops waiting for the cellappmgr when `signal` aborts (the base logs out).
 */
export async function requestCellEntity(
  link: MgrAccess,
  spec: CellEntitySpec,
  signal: AbortSignal,
  log: Logger,
  place: CellPlaceRequest | null = null,
): Promise<CellEntityPlace> {
  // The cellappmgr drops a process that sends it nonsense: a bad value a client caused must not leave.
  const bad = place ? MgrMsg.placeCellEntity.check([spec, place]) : MgrMsg.createCellEntity.check([spec]);
  if (bad) throw new Error(`not asking for the cell entity of ${spec.type} ${spec.entityId}: ${bad}`);
  for (;;) {
    if (!link.channel) log.info(`the cell entity of ${spec.type} ${spec.entityId} waits for the cellappmgr`);
    const ch = await link.connected(signal);
    try {
      if (place) return await ch.requestWithin(ANSWER_MS, MgrMsg.placeCellEntity, spec, place);
      return await ch.requestWithin(ANSWER_MS, MgrMsg.createCellEntity, spec);
    } catch (e) {
      if (!(e instanceof ChannelClosedError) || signal.aborted) throw e;
      log.info(`the cellappmgr went before answering for the cell entity of ${spec.entityId}; asking again`);
      // The link notices the closed channel on its own; wait for that rather than asking on it again.
      if (link.channel === ch) await ch.closed;
    }
  }
}
