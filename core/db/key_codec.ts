/**
 * Keys as bytes whose order (byte by byte, as PostgreSQL compares bytea) is Deno KV's key order: each part is a tag
 * (Uint8Array < string < bigint < number < boolean, as Deno KV lists them) and its bytes. Byte strings and strings end with 0x00, their own
 * zero bytes escaped as 0x00 0xFF (the tuple encoding of FoundationDB), so a key's encoding is a prefix of every key
 * under it, and every key under a prefix P lies strictly between P and P + 0xFF.
 */
import type { DbKey, DbKeyPart } from "./types.ts";

const BYTES = 0x01, STRING = 0x02, BIGINT = 0x03, NUMBER = 0x04, BOOLEAN = 0x05;
const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true });

function escaped(out: number[], bytes: Uint8Array): void {
  for (const b of bytes) {
    out.push(b);
    if (b === 0) out.push(0xff);
  }
  out.push(0);
}

/** The order-preserving bytes of `key`. Throws for a part of another type or a bigint outside 64 bits. */
export function encodeKey(key: DbKey): Uint8Array {
  const out: number[] = [];
  for (const part of key) encodePart(out, part);
  return new Uint8Array(out);
}

function encodePart(out: number[], p: DbKeyPart): void {
  if (p instanceof Uint8Array) {
    out.push(BYTES);
    escaped(out, p);
  } else if (typeof p === "string") {
    out.push(STRING);
    escaped(out, enc.encode(p));
  } else if (typeof p === "number") {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, p);
    // Positive numbers: flip the sign bit; negative ones: flip every bit (so larger magnitudes sort first).
    if (b[0] & 0x80) { for (let i = 0; i < 8; i++) b[i] ^= 0xff; }
    else b[0] ^= 0x80;
    out.push(NUMBER, ...b);
  } else if (typeof p === "bigint") {
    if (p < -(2n ** 63n) || p >= 2n ** 63n) throw new Error(`key part ${p}n is outside 64 bits`);
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, p + 2n ** 63n);
    out.push(BIGINT, ...b);
  } else if (typeof p === "boolean") {
    out.push(BOOLEAN, p ? 1 : 0);
  } else {
    throw new Error(`key part ${String(p)} is not a Uint8Array, string, number, bigint or boolean`);
  }
}

/** The key `bytes` encode (the inverse of encodeKey). */
export function decodeKey(raw: Uint8Array): DbKey {
  // A plain copy: a Node Buffer's slice() would be a view, and its .buffer a shared pool.
  const bytes = new Uint8Array(raw);
  const key: DbKeyPart[] = [];
  let i = 0;
  const unescape = (): Uint8Array => {
    const out: number[] = [];
    for (;;) {
      const b = bytes[i++];
      if (b === undefined) throw new Error("key bytes end inside a string");
      if (b !== 0) out.push(b);
      else if (bytes[i] === 0xff) {
        out.push(0);
        i++;
      } else return new Uint8Array(out);
    }
  };
  while (i < bytes.length) {
    const tag = bytes[i++];
    if (tag === BYTES) key.push(unescape());
    else if (tag === STRING) key.push(dec.decode(unescape()));
    else if (tag === NUMBER) {
      const b = bytes.slice(i, i + 8);
      i += 8;
      if (b[0] & 0x80) b[0] ^= 0x80;
      else for (let k = 0; k < 8; k++) b[k] ^= 0xff;
      key.push(new DataView(b.buffer).getFloat64(0));
    } else if (tag === BIGINT) {
      key.push(new DataView(bytes.buffer, i, 8).getBigUint64(0) - 2n ** 63n);
      i += 8;
    } else if (tag === BOOLEAN) key.push(bytes[i++] === 1);
    else throw new Error(`key bytes hold an unknown tag ${tag} at ${i - 1}`);
  }
  return key;
}

/** The first key past every key under `prefix` (the encoded prefix followed by 0xFF). */
export function prefixEnd(prefix: Uint8Array): Uint8Array {
  const out = new Uint8Array(prefix.length + 1);
  out.set(prefix);
  out[prefix.length] = 0xff;
  return out;
}

/** A 64-bit FNV-1a hash of `bytes` as a signed integer: the advisory lock that stands for a key. */
export function lockOf(bytes: Uint8Array): bigint {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return BigInt.asIntN(64, h);
}
