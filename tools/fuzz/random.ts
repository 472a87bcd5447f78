/**
 * Seeded randomness for the fuzzers: the same seed gives the same inputs, so
 * a failure found once can be replayed.
 */
import { seededRandom } from "../../core/random.ts";

/** A seeded generator of numbers in [0, 1). */
export type Rng = () => number;

/** A generator that always yields the same sequence for `seed`. */
export const rng: (seed: number) => Rng = seededRandom;

/** An integer in [min, max]. */
export function intIn(r: Rng, min: number, max: number): number {
  return min + Math.floor(r() * (max - min + 1));
}

/** One item of `items`. */
export function pick<T>(r: Rng, items: readonly T[]): T {
  return items[Math.floor(r() * items.length)];
}

/** `n` random bytes. */
export function randomBytes(r: Rng, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(r() * 256);
  return out;
}

/** Numbers a parser should survive: edges of every integer width, floats that are not quite numbers. */
export const NASTY_NUMBERS: readonly number[] = [
  0,
  -0,
  1,
  -1,
  0.5,
  127,
  128,
  255,
  256,
  65535,
  65536,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32 - 1,
  2 ** 32,
  2 ** 48,
  2 ** 53 - 1,
  2 ** 53,
  2 ** 64,
  -(2 ** 31),
  -(2 ** 53),
  1e308,
  -1e308,
  5e-324,
  NaN,
  Infinity,
  -Infinity,
];

/** A random value of any msgpack kind, nested up to `depth`. */
export function randomValue(r: Rng, depth = 4): unknown {
  const k = r();
  if (k < 0.2) return pick(r, NASTY_NUMBERS);
  if (k < 0.35) return intIn(r, -1000, 100_000);
  if (k < 0.45) {
    return pick(r, ["", "x", "NPC", "Avatar", "__proto__", "constructor", "127.0.0.1:1", "é☃", "a".repeat(300)]);
  }
  if (k < 0.52) return randomBytes(r, intIn(r, 0, 48));
  if (k < 0.57) return pick(r, [true, false, null]);
  if (k < 0.6) return BigInt(intIn(r, -1e9, 1e9)) * 4294967296n;
  if (depth <= 0) return null;
  if (k < 0.82) return Array.from({ length: intIn(r, 0, 6) }, () => randomValue(r, depth - 1));
  const o: Record<string, unknown> = {};
  const n = intIn(r, 0, 5);
  for (let i = 0; i < n; i++) {
    o[pick(r, ["spaceId", "cellId", "id", "type", "position", "props", "tree", "cell", "load", "k" + i])] = randomValue(
      r,
      depth - 1,
    );
  }
  return o;
}

/**
 * `v` with a few random changes: a value swapped for another of any kind, an
 * item dropped or added, a number pushed to an edge. Containers are copied,
 * so the original stays intact.
 */
export function mutateValue(r: Rng, v: unknown, depth = 0): unknown {
  const roll = r();
  if (depth > 0 && roll < 0.08) return randomValue(r, 2);
  if (typeof v === "number" && roll < 0.5) return pick(r, NASTY_NUMBERS);
  if (typeof v === "string" && roll < 0.3) {
    return pick(r, ["", "x".repeat(intIn(r, 1, 5000)), "127.0.0.1:0", "[::1]:1"]);
  }
  if (Array.isArray(v)) {
    const out = v.map((x) => (r() < 0.3 ? mutateValue(r, x, depth + 1) : x));
    if (r() < 0.1 && out.length > 0) out.splice(intIn(r, 0, out.length - 1), 1);
    if (r() < 0.1) out.splice(intIn(r, 0, out.length), 0, randomValue(r, 2));
    return out;
  }
  if (v !== null && typeof v === "object" && !(v instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const [key, x] of Object.entries(v)) {
      if (r() < 0.05) continue;
      out[key] = r() < 0.3 ? mutateValue(r, x, depth + 1) : x;
    }
    if (r() < 0.05) out[pick(r, ["extra", "__proto__x", "constructor"])] = randomValue(r, 1);
    return out;
  }
  return roll < 0.15 ? randomValue(r, 1) : v;
}

/** `bytes` with random bytes flipped, cut short, or extended. */
export function mutateBytes(r: Rng, bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes);
  const roll = r();
  if (roll < 0.3 && out.length > 1) return out.subarray(0, intIn(r, 0, out.length - 1));
  if (roll < 0.4) {
    const more = new Uint8Array(out.length + intIn(r, 1, 16));
    more.set(out);
    more.set(randomBytes(r, more.length - out.length), out.length);
    return more;
  }
  const flips = intIn(r, 1, 4);
  for (let i = 0; i < flips && out.length > 0; i++) out[intIn(r, 0, out.length - 1)] = Math.floor(r() * 256);
  return out;
}
