/** A JSON description of a registry, as `deno task defs` prints it. */
import { EntityRegistry, MethodDef, PropertyDef } from "./model.ts";

/** One property in the JSON description. */
export interface PropertyJson {
  name: string;
  type: string;
  flags: string;
  audiences: string[];
  default: unknown;
  persistent: boolean;
  /** The LoD label, or null when the property is sent anywhere in the AoI. */
  detailLevel: string | null;
  index: number;
  clientIndex: number;
  sendLatestOnly: boolean;
  identifier: boolean;
  declaredIn: string;
  component: string | null;
  metadata: Record<string, unknown>;
}

/** The JSON description of a registry. */
export interface RegistryJson {
  types: {
    id: number;
    name: string;
    parent: string | null;
    interfaces: string[];
    components: string[];
    proxy: boolean;
    hasBase: boolean;
    hasCell: boolean;
    hasClient: boolean;
    volatile: Record<string, unknown>;
    lodLevels: { label: string; distance: number; hysteresis: number }[];
    properties: PropertyJson[];
    methods: {
      cell: Record<string, unknown>[];
      base: Record<string, unknown>[];
      client: Record<string, unknown>[];
    };
  }[];
}

function prop(p: PropertyDef): PropertyJson {
  return {
    name: p.name,
    type: p.type.name,
    flags: p.flags,
    audiences: [...p.audiences],
    default: p.type.toJSON(p.default),
    persistent: p.persistent,
    detailLevel: p.detailLabel,
    index: p.index,
    clientIndex: p.clientIndex,
    sendLatestOnly: p.sendLatestOnly,
    identifier: p.identifier,
    declaredIn: p.declaredIn,
    component: p.component,
    metadata: { ...p.metadata },
  };
}

function method(m: MethodDef): Record<string, unknown> {
  const args = m.args.map((a) => (a.name ? `${a.name}: ${a.type.name}` : a.type.name));
  const out: Record<string, unknown> = { name: m.name, args };
  if (m.kind === "client") out.detailDistance = m.detailDistance;
  else out.exposed = m.exposed;
  out.index = m.index;
  if (m.component) out.component = m.component;
  if (Object.keys(m.metadata).length) out.metadata = m.metadata;
  return out;
}

/** Describes every type of a registry as plain JSON. */
export function describeRegistry(reg: EntityRegistry): RegistryJson {
  return {
    types: reg.types.map((t) => ({
      id: t.id,
      name: t.name,
      parent: t.parent?.name ?? null,
      interfaces: [...t.interfaces],
      components: [...t.components],
      proxy: t.proxy,
      hasBase: t.hasBase,
      hasCell: t.hasCell,
      hasClient: t.hasClient,
      volatile: { ...t.volatile },
      lodLevels: t.lodLevels.map((l) => ({ label: l.label, distance: l.distance, hysteresis: l.hysteresis })),
      properties: t.properties.map(prop),
      methods: {
        cell: t.cellMethods.map(method),
        base: t.baseMethods.map(method),
        client: t.clientMethods.map(method),
      },
    })),
  };
}
