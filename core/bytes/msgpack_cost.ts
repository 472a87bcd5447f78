/**
 * The weights of the decoding-cost estimate `scanMsgpack` (msgpack_limits.ts)
 * adds up for a msgpack body: what @msgpack/msgpack's decoder and V8 spend on
 * each kind of value and on map keys (the key cache and object shapes that
 * FAST_KEYS and KEY_CACHE_* of msgpack_limits.ts describe), and so what a
 * string costs.
 */
/**
 * Weights of the decoding-cost estimate, in bytes of V8 heap (no pointer
 * compression: 8-byte slots). Each is at least what `deno task bench decode`
 * (bench/decode.ts) measured the decoded value to keep: an empty array 32
 * bytes and its slot 8, an empty object 56, a Uint8Array view 104, a
 * HeapNumber 16, a BigInt 24-32, a dictionary entry 30-60. Decoding takes
 * about 2-3 ns per byte kept for plain arrays and objects (allocation and
 * garbage collection); what takes longer for what it keeps weighs more, at
 * about one unit per 3 ns: strings (decoded one code unit at a time up to 200
 * bytes), views, bigints, and the map-key work (a key-cache miss about 1 µs,
 * a new key or object shape 1-4 µs). So one budget bounds both the memory and
 * the time a frame can take.
 */
export const COST: Readonly<{
  /** An element's place in an array. */
  slot: number;
  /** An array: JSArray and its backing store's header. */
  array: number;
  /** A map: a plain object with 4 in-object property slots. */
  map: number;
  /** Each of a map's first FAST_KEYS entries: a property slot, with growth slack. */
  fastEntry: number;
  /** Each entry past the FAST_KEYS first: V8 turns such an object into a dictionary. */
  dictEntry: number;
  /** A float, or an integer of 32 or 64 bits: a HeapNumber where it is not small. */
  number: number;
  /** A string: its header and the decoder's work per string... */
  string: number;
  /** ...and each of its bytes, up to SHORT_STRING bytes (decoded one code unit at a time)... */
  stringByte: number;
  /** ...or each byte of a longer one (TextDecoder; two heap bytes as UTF-16). */
  longStringByte: number;
  /** A BLOB: a Uint8Array view into the frame. */
  bin: number;
  /** A bigint extension: the BigInt, and the view and DataView the codec reads it through. */
  ext: number;
  /** A string map key seen for the first time in the body: decoded, copied into the key cache, internalised. */
  newKey: number;
  /**
   * A key seen before, of a length of which the body has more than
   * KEY_CACHE_PER_LENGTH distinct keys: the decoder's key cache (16 keys of
   * each length up to 16 bytes) misses it. Keys longer than 16 bytes are
   * never cached and cost what a string costs.
   */
  keyMiss: number;
  /** An object shape not seen before in the body (V8 hidden class and descriptors)... */
  newShape: number;
  /** ...plus this much per property the shape already has (the descriptors copied). */
  shapeProperty: number;
  /** An integer map key: an element of a sparse or dictionary backing store, or a new string name. */
  intKey: number;
}> = Object.freeze({
  slot: 8,
  array: 64,
  map: 64,
  fastEntry: 16,
  dictEntry: 64,
  number: 16,
  string: 64,
  stringByte: 6,
  longStringByte: 2,
  bin: 160,
  ext: 256,
  newKey: 768,
  keyMiss: 640,
  newShape: 256,
  shapeProperty: 16,
  intKey: 768,
});

/** Longest string the decoder decodes in JavaScript, one code unit at a time, in bytes. */
export const SHORT_STRING = 200;

/** The cost of a string (or a map key the decoder does not cache) of `len` bytes. */
export function stringCost(len: number): number {
  return COST.string + (len <= SHORT_STRING ? COST.stringByte : COST.longStringByte) * len;
}
