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
