/** Method arguments as the client protocol carries them: each by its declared type, in order, no count. */
import { ByteReader, ByteWriter } from "../bytes/mod.ts";
import { type EntityType, type MethodDef, ValueError } from "../def/mod.ts";
import { errorText } from "../errors.ts";
import { ErrorCode, ProtocolError } from "./errors.ts";

/**
 * Encodes a method's arguments by their declared types; throws ValueError
 * naming the method and argument when one does not fit or the count is wrong.
 */
export function encodeArgs(method: MethodDef, args: readonly unknown[]): Uint8Array {
  if (args.length !== method.args.length) {
    throw new ValueError(`${method.name} takes ${method.args.length} argument(s), got ${args.length}`);
  }
  const w = new ByteWriter(32);
  method.args.forEach((a, i) => {
    let v: unknown;
    try {
      v = a.type.coerce(args[i]);
    } catch (e) {
      throw new ValueError(`${method.name} argument ${a.name ?? i}: ${errorText(e)}`, { cause: e });
    }
    a.type.write(w, v);
  });
  return w.toBytes();
}

/**
 * Decodes a method's arguments and checks each against its declared type.
 * Throws ProtocolError(badArguments) when the bytes are short, too long, or
 * hold a value the type refuses.
 */
export function decodeArgs(method: MethodDef, bytes: Uint8Array): unknown[] {
  const r = new ByteReader(bytes);
  const out: unknown[] = [];
  for (let i = 0; i < method.args.length; i++) {
    const a = method.args[i];
    try {
      out.push(a.type.coerce(a.type.read(r)));
    } catch (e) {
      throw new ProtocolError(
        ErrorCode.badArguments,
        `${method.name} argument ${a.name ?? i} (${a.type.name}): ${errorText(e)}`,
        { cause: e },
      );
    }
  }
  if (r.remaining !== 0) {
    throw new ProtocolError(
      ErrorCode.badArguments,
      `${method.name} takes ${method.args.length} argument(s); ${r.remaining} byte(s) left over`,
    );
  }
  return out;
}

/** Encodes a client method call (index and arguments, each checked against its type); names the method on error. */
export function writeMethodCall(w: ByteWriter, type: EntityType, method: MethodDef, args: readonly unknown[]): void {
  if (args.length !== method.args.length) {
    throw new RangeError(
      `${type.name}.${method.name} takes ${method.args.length} argument(s), got ${args.length}`,
    );
  }
  w.varint(method.index);
  for (let i = 0; i < args.length; i++) {
    const a = method.args[i];
    let v: unknown;
    try {
      v = a.type.coerce(args[i]);
    } catch (e) {
      throw new RangeError(
        `${type.name}.${method.name} argument ${a.name ?? i}: ${errorText(e)}`,
        { cause: e },
      );
    }
    a.type.write(w, v);
  }
}
