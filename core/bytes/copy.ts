/**
 * A deep copy of message arguments (what msgpack carries: arrays, plain objects, byte arrays, primitives) for a
 * message that is delivered later, since senders may reuse their buffers. A byte array keeps only its own bytes:
 * structuredClone copies the whole buffer a view is of, and the arguments of a message are often views of a
 * larger one (a witness's frame arena, a channel's read buffer, up to the largest frame).
 */
export function copyArgs<T>(value: T): T {
  return copy(value) as T;
}

function copy(v: unknown): unknown {
  if (v === null || typeof v !== "object") return v;
  if (ArrayBuffer.isView(v)) return (v as Uint8Array).slice();
  if (Array.isArray(v)) return v.map(copy);
  if (Object.getPrototypeOf(v) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) out[k] = copy((v as Record<string, unknown>)[k]);
    return out;
  }
  return structuredClone(v);
}

/**
 * About how many bytes a copy of message arguments holds: byte arrays' and strings' lengths, and 16 for every other
 * value. What bounds the messages a process holds for later counts with it.
 */
export function argsBytes(value: unknown): number {
  if (value === null || typeof value !== "object") return typeof value === "string" ? 16 + value.length : 16;
  if (ArrayBuffer.isView(value)) return 16 + value.byteLength;
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + argsBytes(v), 16);
  let n = 16;
  for (const [k, v] of Object.entries(value)) n += k.length + argsBytes(v);
  return n;
}
