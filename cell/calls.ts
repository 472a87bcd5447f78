/**
 * Calls of cell methods: a client's call of an exposed method (through its
 * proxy), and a script's awaitable call of another entity's method, which
 * runs on the entity's real wherever it is (a ghost forwards it, with a
 * promise instead of callbacks).
 */
import { errorText } from "../core/errors.ts";
import { ByteReader, methodArgs } from "../core/def/mod.ts";
import { ErrorCode, type ErrorCodeValue } from "../core/proto/mod.ts";
import { CellMsg, RemoteError } from "../core/wire/mod.ts";
import type { CellHost } from "./cell_host.ts";
import type { CellAddress } from "./cell_layout.ts";
import type { Entity } from "./entity.ts";
import type { CellBorders } from "./borders/mod.ts";
import { enterEntity, leaveEntity } from "./load/entity_load.ts";

/** What a client's call needs of its target's cell. */
export interface ClientCallCell {
  /** Runs script method `name` of `e` for a client; what it throws goes to `failed`. */
  callForClient(e: Entity, name: string, args: unknown[], failed: (err: unknown) => void): void;
}

/** What an entity call needs of the cell it is made in. */
export interface CallingCell {
  readonly spaceId: number;
  readonly entities: ReadonlyMap<number, Entity>;
  readonly ghosts: ReadonlyMap<number, Entity>;
  readonly host: Pick<CellHost, "ghosting">;
  /** Where reals that left the cell went. */
  readonly borders: Pick<CellBorders, "departedTo">;
}

/**
 * A client's call of an exposed cell method of `target`, made through the
 * proxy of `callerId` and naming the target's type as `typeId`: checked
 * against the definition, arguments decoded by their declared types, and the
 * caller's id passed first (BigWorld's hidden argument). A bad call, or a
 * script that throws, goes to `fail` naming the entity and the method: the
 * client hears of it.
 */
export function clientCall(
  cell: ClientCallCell,
  callerId: number,
  target: Entity,
  typeId: number,
  index: number,
  args: Uint8Array,
  fail: (code: ErrorCodeValue, message: string) => void,
): void {
  const who = `${target.type.name} ${target.id}`;
  if (target.type.id !== typeId) {
    return fail(ErrorCode.unknownMethod, `entity ${target.id} is a ${target.type.name}, not type ${typeId}`);
  }
  const m = target.type.methods("cell")[index];
  if (!m) return fail(ErrorCode.unknownMethod, `${who} has no cell method with index ${index}`);
  if (!m.exposed) return fail(ErrorCode.notExposed, `${who}.${m.name} is not exposed to clients`);
  const r = new ByteReader(args);
  const values: unknown[] = [callerId];
  try {
    for (const a of m.args) values.push(a.type.read(r));
  } catch (e) {
    const types = m.args.map((a) => a.type.name).join(", ");
    return fail(ErrorCode.badArguments, `${who}.${m.name}: arguments do not match (${types}): ${errorText(e)}`);
  }
  if (r.remaining > 0) {
    return fail(ErrorCode.badArguments, `${who}.${m.name}: ${r.remaining} bytes left after the declared arguments`);
  }
  cell.callForClient(
    target,
    m.name,
    values,
    (err) => fail(ErrorCode.serverError, `${who}.${m.name} failed: ${errorText(err)}`),
  );
}

/**
 * Runs cell method `method` of entity `targetId` here when its real is here,
 * or sends it on to the real's cell when only its ghost is; waits for a real
 * that is being handed over. Rejects when the entity is gone.
 */
export async function runEntityCall(
  cell: CallingCell,
  targetId: number,
  callerId: number,
  method: string,
  args: unknown[],
): Promise<unknown> {
  const target = cell.entities.get(targetId);
  if (target?.offloading) {
    const moved = await new Promise<CellAddress | null>((r) => target.offloading!.held.push(r));
    if (moved) return await forward(cell, moved.address, moved.cell, targetId, callerId, method, args);
  }
  if (target && !target.destroyed) return await invoke(target, callerId, method, args);
  const info = cell.ghosts.get(targetId)?.ghostInfo;
  if (info) return await forward(cell, info.realAddress, info.realCell, targetId, callerId, method, args);
  // Gone from here a moment ago (a call sent before its sender knew): it goes where the real went.
  const gone = cell.borders.departedTo(targetId);
  if (gone) return await forward(cell, gone.address, gone.cell, targetId, callerId, method, args, gone.spaceId);
  throw new Error(`${method} on entity ${targetId}: no such entity in space ${cell.spaceId} (destroyed or gone)`);
}

function forward(
  cell: CallingCell,
  address: string,
  realCell: number,
  targetId: number,
  callerId: number,
  method: string,
  args: unknown[],
  spaceId: number = cell.spaceId,
): Promise<unknown> {
  const gh = cell.host.ghosting;
  return gh.ask(
    address,
    gh.config.callTimeoutMs,
    CellMsg.entityCall,
    spaceId,
    realCell,
    targetId,
    callerId,
    method,
    args,
  )
    .catch((e: Error) => {
      if (e instanceof RemoteError) throw e; // the real answered: its own error
      throw new Error(
        `${method} on entity ${targetId}: its real's cellapp at ${address} did not answer (${e.message}); ` +
          `if that cellapp died, the entity comes back from its latest backup without this call`,
      );
    });
}

async function invoke(target: Entity, callerId: number, method: string, args: unknown[]): Promise<unknown> {
  const who = `${target.type.name} ${target.id}`;
  const values = methodArgs(target.type, "cell", method, args, who);
  const fn = (target.script as unknown as Record<string, unknown> | null)?.[method];
  if (typeof fn !== "function") throw new Error(`${who} has no script for its cell method '${method}'`);
  // Its synchronous part is charged to the target (cell/load/).
  const charged = enterEntity(target);
  let r: unknown;
  try {
    r = (fn as (...a: unknown[]) => unknown).call(target.script, callerId, ...values);
  } finally {
    if (charged) leaveEntity();
  }
  return await r;
}
