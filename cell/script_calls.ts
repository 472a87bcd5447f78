/**
 * Calling an entity's cell script: each callback charged to its entity's CPU (cell/load/), and what it throws,
 * now or later, contained: logged and counted, or handed to the client that asked.
 */
import { errorText } from "../core/errors.ts";
import type { CellHost } from "./cell_host.ts";
import type { Entity } from "./entity.ts";
import { enterEntity, leaveEntity } from "./load/entity_load.ts";

/** What calling scripts needs of their cell. */
export interface ScriptCell {
  readonly spaceId: number;
  readonly host: Pick<CellHost, "log" | "scripts">;
  /** Script exceptions caught (and logged) so far. */
  scriptErrors: number;
}

type Callbacks = Record<string, ((...a: unknown[]) => unknown) | undefined>;

/** Gives `e` an instance of its type's cell script, if it has one; a constructor that throws leaves it none. */
export function attachScript(cell: ScriptCell, e: Entity): void {
  const cls = cell.host.scripts[e.type.name];
  if (!cls) return;
  try {
    e.script = new cls(e);
  } catch (err) {
    scriptFailed(cell, e, "constructor", err);
  }
}

/** Calls a script callback of `e`, containing (and logging) anything it throws. */
export function callScript(cell: ScriptCell, e: Entity, name: string, ...args: unknown[]): void {
  const s = e.script as unknown as Callbacks | null;
  const fn = s?.[name];
  if (!fn || e.destroyed) return;
  // Its state went with its hand-over: the new real has callbacks of its own; this copy hears them if it stays.
  if (e.offloading) return void e.offloading.held.push((moved) => moved || callScript(cell, e, name, ...args));
  const charged = enterEntity(e);
  try {
    const r = fn.apply(s, args);
    // An async callback that fails later is contained too: an unhandled rejection would stop the process.
    if (r instanceof Promise) r.catch((err) => scriptFailed(cell, e, name, err));
  } catch (err) {
    scriptFailed(cell, e, name, err);
  } finally {
    if (charged) leaveEntity();
  }
}

/**
 * Runs script method `name` of `e` for a client: what it throws, now or
 * later, goes to `failed` instead of the log, since it answers the client.
 */
export function callForClient(
  cell: ScriptCell,
  e: Entity,
  name: string,
  args: unknown[],
  failed: (err: unknown) => void,
): void {
  const s = e.script as unknown as Callbacks | null;
  const fn = s?.[name];
  if (!fn || e.destroyed) return;
  const fault = (err: unknown) => {
    cell.scriptErrors++;
    failed(err);
  };
  const charged = enterEntity(e);
  try {
    const r = fn.apply(s, args);
    if (r instanceof Promise) r.catch(fault);
  } catch (err) {
    fault(err);
  } finally {
    if (charged) leaveEntity();
  }
}

function scriptFailed(cell: ScriptCell, e: Entity, where: string, err: unknown): void {
  cell.scriptErrors++;
  const msg = errorText(err, { stack: true });
  cell.host.log.error(`script error in ${e.type.name} ${e.id} (space ${cell.spaceId}) ${where}: ${msg}`);
}
