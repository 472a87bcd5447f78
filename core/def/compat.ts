/**
 * Whether a new registry may replace a running one in place (a game reload, docs/game.md#reloading-a-game): what
 * live entities hold, what is stored and what connected clients know must keep its meaning. Types, properties and
 * methods may be added after the existing ones; nothing that exists may go, move or change its type, and the methods
 * clients call (exposed) or are called with (client methods) keep their signature.
 */
import type { EntityRegistry, EntityType, MethodDef, MethodKind, PropertyDef } from "./model.ts";

/** Every reason `next` cannot replace `current` in place, one line each; empty when it can. */
export function incompatibilities(current: EntityRegistry, next: EntityRegistry): string[] {
  const out: string[] = [];
  for (const old of current.types) {
    const t = next.find(old.name);
    if (!t) {
      out.push(`entity type ${old.name} was removed`);
      continue;
    }
    if (t.id !== old.id) out.push(`entity type ${old.name} moved from id ${old.id} to ${t.id} (add new types last)`);
    for (const part of ["hasBase", "hasCell", "hasClient", "proxy"] as const) {
      if (t[part] !== old[part]) out.push(`entity type ${old.name}: ${part} changed from ${old[part]} to ${t[part]}`);
    }
    if (JSON.stringify(t.volatile) !== JSON.stringify(old.volatile)) {
      out.push(`entity type ${old.name}: its volatile data changed`);
    }
    if (JSON.stringify(t.lodLevels) !== JSON.stringify(old.lodLevels)) {
      out.push(`entity type ${old.name}: its detail levels changed`);
    }
    for (const p of old.properties) checkProperty(out, old, p, t.findProperty(p.name));
    for (const kind of ["cell", "base", "client"] as const) {
      for (const m of old.methods(kind)) checkMethod(out, old, kind, m, t.findMethod(kind, m.name));
    }
  }
  return out;
}

function checkProperty(out: string[], type: EntityType, old: PropertyDef, p: PropertyDef | undefined): void {
  const what = `${type.name}.${old.name}${old.persistent ? " (persistent)" : ""}`;
  if (!p) return void out.push(`property ${what} was removed`);
  if (p.type.name !== old.type.name) out.push(`property ${what} changed type from ${old.type.name} to ${p.type.name}`);
  if (p.flags !== old.flags) out.push(`property ${what} changed flags from ${old.flags} to ${p.flags}`);
  if (p.persistent !== old.persistent) out.push(`property ${what}: persistent changed to ${p.persistent}`);
  if (p.index !== old.index || p.clientIndex !== old.clientIndex) {
    out.push(`property ${what} moved (index ${old.index} to ${p.index}; add new properties after the existing ones)`);
  }
  if (p.detailLevel !== old.detailLevel) out.push(`property ${what} changed detail level`);
}

function checkMethod(out: string[], type: EntityType, kind: MethodKind, old: MethodDef, m: MethodDef | undefined) {
  const what = `${kind} method ${type.name}.${old.name}${old.exposed ? " (exposed to clients)" : ""}`;
  if (!m) return void out.push(`${what} was removed`);
  const sig = (d: MethodDef) => `(${d.args.map((a) => a.type.name).join(", ")})`;
  // Clients call exposed methods and decode client methods: those keep their signature. Others are called only
  // between processes, which all swap to the new game together.
  const clientsUse = kind === "client" || old.exposed;
  if (clientsUse && sig(m) !== sig(old)) out.push(`${what} changed its signature from ${sig(old)} to ${sig(m)}`);
  if (m.index !== old.index) {
    out.push(`${what} moved (index ${old.index} to ${m.index}; add new methods after the existing ones)`);
  }
  if (old.exposed && !m.exposed) out.push(`${what} is no longer exposed`);
}
