/**
 * How the client protocol is declared: each message is one entry of a table, its name, code and fields in order, each
 * field a codec. Encoding, decoding, the checks on what is decoded and the TypeScript types of the messages all come
 * from that entry (docs/protocol.md, "Client protocol"). A message is `[u8 code][fields in order]`.
 */
import type { ByteReader, ByteWriter } from "../bytes/mod.ts";
import { errorText } from "../errors.ts";
import { ErrorCode, type ErrorCodeValue, ProtocolError } from "./errors.ts";

/**
 * How one field is written and read. `W` is what encoding takes, `R` what decoding gives (they differ where the
 * sender writes bytes it encoded already, such as a property change); `C` is what decoding needs to know (the
 * client's entity types, for the AoI part). `m` is the message: encoding gets all of it, decoding the fields read so
 * far. A read throws on bad input: a ProtocolError to answer with its code, anything else counts as malformed.
 */
export interface Codec<W, R = W, C = unknown> {
  /** What the field holds on the wire, for errors and docs. */
  readonly wire: string;
  write(w: ByteWriter, v: W, m: Readonly<Record<string, unknown>>): void;
  read(r: ByteReader, ctx: C, m: Readonly<Record<string, unknown>>): R;
  /** Once the whole message is read: why the value is refused, with the error code to answer with, or null. */
  check?(v: R): readonly [ErrorCodeValue, string] | null;
}

// deno-lint-ignore no-explicit-any
type AnyCodec = Codec<any, any, any>;

/** A message's fields: name to codec, in wire order. */
export type Fields = Readonly<Record<string, AnyCodec>>;

/** One declared message. */
export interface MessageSpec<N extends string = string, K extends number = number, F extends Fields = Fields> {
  readonly name: N;
  readonly code: K;
  readonly fields: F;
  /** The fields' names in wire order. */
  readonly names: readonly string[];
  /** The fields' codecs in wire order. */
  readonly codecs: readonly AnyCodec[];
  /** Reads the message tagged by its code as `id` (session messages). */
  readonly readById: (r: ByteReader, ctx: unknown) => Record<string, unknown>;
  /** Reads the message tagged by its name as `kind` (AoI messages, whose `id` is an entity's). */
  readonly readByKind: (r: ByteReader, ctx: unknown) => Record<string, unknown>;
}

/** Declares a message: `fields` in wire order after the code byte. */
export function message<N extends string, K extends number, F extends Fields>(
  code: K,
  name: N,
  fields: F,
): MessageSpec<N, K, F> {
  if (!Number.isInteger(code) || code < 0 || code > 255) throw new Error(`message ${name}: code ${code} is not a byte`);
  const order = Object.entries(fields);
  const names = order.map(([n]) => n), codecs = order.map(([, c]) => c);
  for (const n of names) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(n) || n === "kind") {
      throw new Error(`message ${name}: field name ${JSON.stringify(n)} is not an identifier, or is the tag "kind"`);
    }
  }
  const checked = order.filter(([, c]) => c.check);
  return {
    name,
    code,
    fields,
    names,
    codecs,
    // A message with a field `id` (an AoI message's entity) is tagged by its name only.
    readById: names.includes("id")
      ? () => {
        throw new Error(`message ${name} has a field id: it is read tagged by its kind`);
      }
      : compileReader(name, code, names, codecs, checked, "id"),
    readByKind: compileReader(name, code, names, codecs, checked, "kind"),
  };
}

/** What encoding takes for field codec `C`. */
export type WriteOf<C> = C extends Codec<infer W, infer _R, infer _C> ? W : never;
/** What decoding gives for field codec `C`. */
export type ReadOf<C> = C extends Codec<infer _W, infer R, infer _C> ? R : never;

/** The fields of a message as encoding takes them. */
export type Written<S extends MessageSpec> = { [K in keyof S["fields"]]: WriteOf<S["fields"][K]> };
/** The fields of a message as decoding gives them. */
export type Decoded<S extends MessageSpec> = { [K in keyof S["fields"]]: ReadOf<S["fields"][K]> };

/** A table of messages by name. */
export type Table = Readonly<Record<string, MessageSpec>>;

/** Each message's code, by name: `{ login: 1, ... }`. */
export type Codes<T extends Table> = { readonly [N in keyof T]: T[N]["code"] };

/** The codes of a table, by name. */
export function codes<T extends Table>(table: T): Codes<T> {
  const out: Record<string, number> = {};
  for (const [name, spec] of Object.entries(table)) {
    if (spec.name !== name) throw new Error(`message ${spec.name} is listed as ${name}`);
    out[name] = spec.code;
  }
  return out as Codes<T>;
}

/** A message table indexed by code, for decoding; throws when two messages share a code. */
export function byCode(...tables: Table[]): (MessageSpec | undefined)[] {
  const out: (MessageSpec | undefined)[] = new Array(256).fill(undefined);
  for (const t of tables) {
    for (const spec of Object.values(t)) {
      const taken = out[spec.code];
      if (taken) throw new Error(`message ${spec.name}: code ${spec.code} is already ${taken.name}`);
      out[spec.code] = spec;
    }
  }
  return out;
}

/** Writes one message: its code, then each field by its codec. */
export function writeMessage(w: ByteWriter, spec: MessageSpec, m: Readonly<Record<string, unknown>>): void {
  w.u8(spec.code);
  const names = spec.names, codecs = spec.codecs;
  for (let i = 0; i < names.length; i++) codecs[i].write(w, m[names[i]], m);
}

/**
 * Reads the message `spec` (its code read already): its tag (`id`: its code, or `kind`: its name), then its fields,
 * then the fields' checks. Throws ProtocolError naming the message and field: with the code a check gave, else
 * `malformed`.
 */
export function readMessage<C>(r: ByteReader, spec: MessageSpec, ctx: C, tag: "id" | "kind"): Record<string, unknown> {
  return (tag === "id" ? spec.readById : spec.readByKind)(r, ctx);
}

type Reader = (r: ByteReader, ctx: unknown) => Record<string, unknown>;

/**
 * The reader of one message, made once when it is declared: a function that builds the decoded object as one literal
 * and fills each field with a named store, so that every message of a kind has one hidden class and each codec is
 * called from a call site of its own. Decoding runs for every client message a baseapp takes and every AoI message a
 * client takes; a loop over the fields with keyed stores made it about a third slower.
 * Field names are identifiers (checked by `message`), and nothing of the input reaches the code.
 */
function compileReader(
  name: string,
  code: number,
  names: readonly string[],
  codecs: readonly AnyCodec[],
  checked: readonly (readonly [string, AnyCodec])[],
  tag: "id" | "kind",
): Reader {
  const fill = names.map((n) => `${n}: undefined`).join(", ");
  const reads = names.map((n, i) => `at = ${i}; m.${n} = c[${i}].read(r, ctx, m);`).join("\n    ");
  const checks = checked.map(([n], i) =>
    `bad = k[${i}].check(m.${n}); if (bad) throw refuse(bad, ${JSON.stringify(n)});`
  )
    .join("\n  ");
  const body = `
  const m = { ${tag}: tagValue${fill ? ", " + fill : ""} };
  let at = 0, bad = null;
  try {
    ${reads}
  } catch (e) {
    throw fail(at, e);
  }
  ${checks}
  return m;`;
  const spec = { name, code } as MessageSpec;
  const fail = (at: number, e: unknown) => fieldError(spec, names[at], e);
  const refuse = (bad: readonly [ErrorCodeValue, string], field: string) =>
    new ProtocolError(bad[0], `${name} (message ${code}) ${field}: ${bad[1]}`);
  const make = new Function("tagValue", "c", "k", "fail", "refuse", `return function read(r, ctx) {${body}\n};`);
  return make(tag === "id" ? code : name, codecs, checked.map(([, c]) => c), fail, refuse) as Reader;
}

/** The error for a field that could not be read: the message, its code and the field, keeping the cause. */
export function fieldError(spec: MessageSpec, field: string, e: unknown): ProtocolError {
  if (e instanceof ProtocolError) {
    return new ProtocolError(e.code, `${spec.name} (message ${spec.code}) ${field}: ${e.message}`, { cause: e });
  }
  return new ProtocolError(
    ErrorCode.malformed,
    `malformed ${spec.name} (message ${spec.code}) ${field}: ${errorText(e)}`,
    { cause: e },
  );
}
