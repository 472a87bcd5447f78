/**
 * The script's handles for calling client methods (BigWorld's ownClient, otherClients, allClients): one function per
 * client method of the entity's type. Calls to other clients go through the entity's event history, so they stay
 * in order with its property changes and reach whoever sees the entity (DetailDistance decides how far).
 */
import { historyOf, type HistoryOwner } from "./event_history.ts";

/** A client method caller: `clients.onChat(from, text)`. */
export type ClientCaller = Readonly<Record<string, (...args: unknown[]) => void>>;

/** The three callers of an entity. */
export interface ClientCallers {
  /** The entity's own client only. */
  readonly ownClient: ClientCaller;
  /** The clients of other entities that have this one in their AoI (within the method's DetailDistance). */
  readonly otherClients: ClientCaller;
  /** Both. */
  readonly allClients: ClientCaller;
}

/** What clientsOf needs of an entity, and where it keeps the callers. */
export interface ClientsOwner extends HistoryOwner {
  /** Its callers, once clientsOf made them. */
  clientCallers: ClientCallers | null;
}

function caller(e: HistoryOwner, own: boolean, others: boolean): ClientCaller {
  const out: Record<string, (...args: unknown[]) => void> = {};
  for (const m of e.type.clientMethods) {
    out[m.name] = (...args: unknown[]) => historyOf(e).callClientMethod(m.name, args, own, others);
  }
  return Object.freeze(out);
}

/** The entity's client method callers (made once per entity). */
export function clientsOf(e: ClientsOwner): ClientCallers {
  let c = e.clientCallers;
  if (c === null) {
    c = { ownClient: caller(e, true, false), otherClients: caller(e, false, true), allClients: caller(e, true, true) };
    e.clientCallers = c;
  }
  return c;
}
