/**
 * Encoders and decoders per audience. Client traffic uses the compact
 * type-driven binary form (property index + value by its declared type);
 * ghost and backup state are positional binary; persistent state is a msgpack
 * map by property name, so stored records survive definition changes.
 *
 * Change format: varint(index * 2 + nested); for a nested change or a slice,
 * varint(pathLength * 2 + isSlice) and the path as varints; then the value, or
 * for a slice varint(start), varint(end) and the new elements as an ARRAY.
 */
import { decode as mpDecode, encode as mpEncode } from "@msgpack/msgpack";
import { ByteReader, ByteWriter } from "../bytes/mod.ts";
import { ArrayType } from "./compound.ts";
import { ChangeRecord, PropertyContainer } from "./container.ts";
import { AUD } from "./flags.ts";
import { EntityType, PropertyDef } from "./model.ts";
import { typeAtPath } from "./paths.ts";

/** Index space of a change: client (clientIndex) or server-internal (index). */
export type IndexSpace = "client" | "internal";

const scratch = new ByteWriter(1024);

function done(w: ByteWriter): Uint8Array {
  const out = w.toBytes();
  w.reset();
  return out;
}

/** Writes one change (as a ChangeSink sees it) in the compact form. */
export function writeChange(
  w: ByteWriter,
  prop: PropertyDef,
  path: readonly number[],
  value: unknown,
  start: number,
  end: number,
  space: IndexSpace = "client",
): void {
  const idx = space === "client" ? prop.clientIndex : prop.index;
  if (idx < 0) throw new RangeError(`${prop.name} (${prop.flags}) is never sent to a client`);
  if (path.length === 0 && start < 0) {
    w.varint(idx * 2);
    prop.type.write(w, value);
    return;
  }
  w.varint(idx * 2 + 1);
  w.varint(path.length * 2 + (start >= 0 ? 1 : 0));
  for (let i = 0; i < path.length; i++) w.varint(path[i]);
  const t = typeAtPath(prop.type, path);
  if (start >= 0) {
    if (!(t instanceof ArrayType)) throw new RangeError(`slice change of ${prop.name} is not on an array`);
    w.varint(start);
    w.varint(end);
    const items = value as unknown[];
    w.varint(items.length);
    for (let i = 0; i < items.length; i++) t.of.write(w, items[i]);
  } else t.write(w, value);
}

/** Writes a change record. */
export function writeChangeRecord(
  w: ByteWriter,
  type: EntityType,
  rec: ChangeRecord,
  space: IndexSpace = "client",
): void {
  writeChange(w, type.properties[rec.index], rec.path, rec.value, rec.start, rec.end, space);
}

/** Reads one change; the record's index is the property index in either space. */
export function readChange(r: ByteReader, type: EntityType, space: IndexSpace = "client"): ChangeRecord {
  const head = r.varint();
  const idx = Math.floor(head / 2);
  const prop = space === "client" ? type.clientProperties[idx] : type.properties[idx];
  if (!prop) throw new RangeError(`${type.name} has no ${space} property index ${idx}`);
  if (head % 2 === 0) {
    return { kind: "set", index: prop.index, path: [], value: prop.type.read(r), start: -1, end: -1 };
  }
  const h2 = r.varint();
  const n = Math.floor(h2 / 2);
  if (n > r.remaining) throw new RangeError(`change path of ${n} levels exceeds the data left`);
  const path = new Array<number>(n);
  for (let i = 0; i < n; i++) path[i] = r.varint();
  const t = typeAtPath(prop.type, path);
  if (h2 % 2 === 1) {
    if (!(t instanceof ArrayType)) throw new RangeError(`slice change of ${prop.name} is not on an array`);
    const start = r.varint();
    const end = r.varint();
    const count = r.varint();
    if (count > r.remaining) throw new RangeError(`slice of ${count} elements exceeds the data left`);
    const items = new Array<unknown>(count);
    for (let i = 0; i < count; i++) items[i] = t.of.read(r);
    return { kind: "slice", index: prop.index, path, value: items, start, end };
  }
  return { kind: "set", index: prop.index, path, value: t.read(r), start: -1, end: -1 };
}

/** Encodes one change record to bytes. */
export function encodeChange(type: EntityType, rec: ChangeRecord, space: IndexSpace = "client"): Uint8Array {
  writeChangeRecord(scratch, type, rec, space);
  return done(scratch);
}

/** Decodes one change record from bytes. */
export function decodeChange(type: EntityType, bytes: Uint8Array, space: IndexSpace = "client"): ChangeRecord {
  return readChange(new ByteReader(bytes), type, space);
}

/**
 * Writes the state one client audience sees, as (clientIndex, value) pairs.
 * `detailLevel` limits other-client state to properties visible at that level
 * (0 = nearest; a property is visible when its level >= the given one).
 */
export function writeClientState(
  w: ByteWriter,
  c: PropertyContainer,
  audience: "ownClient" | "otherClients",
  detailLevel = 0,
): void {
  const props = c.type.propertiesFor(audience);
  let count = 0;
  for (const p of props) if (c.holds(p) && (audience === "ownClient" || p.detailLevel >= detailLevel)) count++;
  w.varint(count);
  for (const p of props) {
    if (!c.holds(p) || (audience === "otherClients" && p.detailLevel < detailLevel)) continue;
    w.varint(p.clientIndex);
    p.type.write(w, c.values[p.index]);
  }
}

/** Reads client state into a container (values are stored as read; nothing is recorded). */
export function readClientState(r: ByteReader, c: PropertyContainer): PropertyDef[] {
  const n = r.varint();
  const got: PropertyDef[] = [];
  for (let i = 0; i < n; i++) {
    const idx = r.varint();
    const p = c.type.clientProperties[idx];
    if (!p) throw new RangeError(`${c.type.name} has no client property index ${idx}`);
    c.load(p.index, p.type.read(r));
    got.push(p);
  }
  return got;
}

/** The state the entity's own client sees from this part. */
export function encodeOwnClientState(c: PropertyContainer): Uint8Array {
  writeClientState(scratch, c, "ownClient");
  return done(scratch);
}

/** The state other clients see at a detail level (0 = nearest: everything). */
export function encodeOtherClientState(c: PropertyContainer, detailLevel = 0): Uint8Array {
  writeClientState(scratch, c, "otherClients", detailLevel);
  return done(scratch);
}

/** Reads own- or other-client state into a (client-side) container. */
export function decodeClientState(bytes: Uint8Array, c: PropertyContainer): PropertyDef[] {
  return readClientState(new ByteReader(bytes), c);
}

function writePositional(w: ByteWriter, c: PropertyContainer, props: readonly PropertyDef[]): void {
  for (const p of props) p.type.write(w, c.values[p.index]);
}

function readPositional(r: ByteReader, c: PropertyContainer, props: readonly PropertyDef[]): void {
  // State written before a game reload added properties ends early: those keep their defaults (docs/game.md).
  for (const p of props) {
    if (r.remaining === 0) break;
    c.load(p.index, p.type.read(r));
  }
}

/** The full ghosted state, for creating a ghost (the container must hold all ghosted properties). */
export function encodeGhostState(c: PropertyContainer): Uint8Array {
  writePositional(scratch, c, c.type.propertiesFor("ghost"));
  return done(scratch);
}

/** Creates a read-only ghost container from ghosted state. */
export function decodeGhostState(type: EntityType, bytes: Uint8Array, entityId = 0): PropertyContainer {
  const c = new PropertyContainer(type, "ghost", { entityId, readOnly: true });
  readPositional(new ByteReader(bytes), c, type.propertiesFor("ghost"));
  return c;
}

/** Every cell property, for backing the cell entity up to its base (or offloading it). */
export function encodeCellBackup(c: PropertyContainer): Uint8Array {
  writePositional(scratch, c, c.type.propertiesFor("cell"));
  return done(scratch);
}

/** Restores a cell container from a backup. */
export function decodeCellBackup(type: EntityType, bytes: Uint8Array, entityId = 0): PropertyContainer {
  const c = new PropertyContainer(type, "cell", { entityId });
  readPositional(new ByteReader(bytes), c, type.propertiesFor("cell"));
  return c;
}

/** The persistent properties this container holds, as a msgpack map by name (for Deno KV). */
export function encodePersistentState(c: PropertyContainer): Uint8Array {
  const out: Record<string, unknown> = {};
  for (const p of c.type.propertiesFor("db")) if (c.holds(p)) out[p.name] = c.values[p.index];
  return mpEncode(out);
}

/**
 * Loads persistent state into a container: each value is checked against the
 * current definition; names that are no longer persistent properties are
 * returned, so the caller can log them; missing ones keep their defaults.
 */
export function decodePersistentState(bytes: Uint8Array, c: PropertyContainer): string[] {
  const data = mpDecode(bytes) as Record<string, unknown>;
  const skipped: string[] = [];
  for (const [name, v] of Object.entries(data)) {
    const p = c.type.findProperty(name);
    if (!p || (p.mask & AUD.db) === 0) {
      skipped.push(name);
      continue;
    }
    if (!c.holds(p)) continue;
    c.load(p.index, p.type.coerce(v));
  }
  return skipped;
}
