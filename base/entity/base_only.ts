/**
 * Base-only entities: types with a base and no client (a guild, a matchmaker, an instance's keeper), created on
 * the least loaded baseapp by createBaseAnywhere. They are held, autosaved, backed up and restored like proxies, but
 * never wait for a client. One whose type has a cell part gets its cell entity when its script asks
 * (createCellEntity, createInNewSpace).
 */
import { errorText } from "../../core/errors.ts";
import { type EntityRegistry, type EntityType, PropertyContainer } from "../../core/def/mod.ts";
import type { Proxy } from "./proxy.ts";

/**
 * Makes a base-only entity of `typeName` with id `id` and its initial base properties `props` (checked against the
 * definition); throws what is wrong, naming the type and property.
 */
export function createBaseHere(
  registry: EntityRegistry,
  typeName: string,
  props: Record<string, unknown>,
  id: number,
  make: (id: number, type: EntityType, cellProps: PropertyContainer) => Proxy,
): Proxy {
  const type = registry.types.find((t) => t.name === typeName);
  if (!type) throw new Error(`createBaseAnywhere: no entity type "${typeName}"`);
  if (!type.hasBase || type.proxy) {
    throw new Error(`createBaseAnywhere: ${typeName} is not a base-only type (it needs hasBase and not proxy)`);
  }
  const p = make(id, type, new PropertyContainer(type, "cell", { entityId: id }));
  for (const [name, value] of Object.entries(props)) {
    const def = type.findProperty(name);
    if (!def || !p.base.holds(def)) throw new Error(`createBaseAnywhere: ${typeName} has no base property '${name}'`);
    try {
      p.base.set(name, value);
    } catch (e) {
      throw new Error(`createBaseAnywhere: ${typeName}.${name}: ${errorText(e)}`, { cause: e });
    }
  }
  return p;
}
