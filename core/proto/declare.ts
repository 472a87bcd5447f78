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
  /** The fields in wire order, as name and codec. */
  readonly order: readonly (readonly [string, AnyCodec])[];
  /** The fields with a check, in wire order. */
  readonly checked: readonly (readonly [string, AnyCodec])[];
}

/** Declares a message: `fields` in wire order after the code byte. */
export function message<N extends string, K extends number, F extends Fields>(
  code: K,
  name: N,
  fields: F,
): MessageSpec<N, K, F> {
  if (!Number.isInteger(code) || code < 0 || code > 255) throw new Error(`message ${name}: code ${code} is not a byte`);
  const order = Object.entries(fields);
  return { name, code, fields, order, checked: order.filter(([, c]) => c.check) };
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
  const order = spec.order;
  for (let i = 0; i < order.length; i++) order[i][1].write(w, m[order[i][0]], m);
}

/**
 * Reads the fields of the message `spec` (its code read already) into `m`, which holds the message's tag, then runs
 * the fields' checks. Throws ProtocolError naming the message and field: with the code a check gave, else
 * `malformed`.
 */
export function readFields<C>(r: ByteReader, spec: MessageSpec, ctx: C, m: Record<string, unknown>): void {
  const order = spec.order;
  for (let i = 0; i < order.length; i++) {
    const [name, codec] = order[i];
    try {
      m[name] = codec.read(r, ctx, m);
    } catch (e) {
      throw fieldError(spec, name, e);
    }
  }
  const checked = spec.checked;
  for (let i = 0; i < checked.length; i++) {
    const [name, codec] = checked[i];
    const bad = codec.check!(m[name]);
    if (bad) throw new ProtocolError(bad[0], `${spec.name} (message ${spec.code}) ${name}: ${bad[1]}`);
  }
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
