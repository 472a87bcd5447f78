/**
 * A linear pre-scan of a msgpack body, so that a frame from a peer is refused
 * before @msgpack/msgpack decodes it when decoding it would cost far more
 * memory or time than its size. The decoder has no depth limit (it keeps one
 * stack entry per level), allocates `new Array(n)` from a declared length
 * before reading the elements, and turns 1-2 wire bytes into objects of
 * 30-200 heap bytes (empty arrays and maps, views of tiny BLOBs, objects with
 * keys never seen before). The scan walks the structure once, with a small
 * explicit stack and no allocation, and checks the depth, the lengths, the
 * number of values, the map keys, the extension types and an estimate of what
 * decoding will cost (COST, msgpack_cost.ts), against MsgpackLimits.
 */
import { COST, stringCost } from "./msgpack_cost.ts";

/** What a msgpack body may contain; `scanMsgpack` refuses a body beyond any of them. */
export interface MsgpackLimits {
  /**
   * Deepest nesting: the number of arrays and maps around a value. The
   * Encoder writes 99 at most (its maxDepth of 100 counts the value itself).
   */
  readonly maxDepth: number;
  /** Most elements of one array, or entries of one map. */
  readonly maxLength: number;
  /** Most values in one body, every element, map key and map value counted. */
  readonly maxItems: number;
  /** The estimated decoding cost (COST units) may be `costPerByte` per body byte... */
  readonly costPerByte: number;
  /** ...plus this much, so that small messages of costly kinds pass. */
  readonly costAllowance: number;
  /** Extension types accepted, each with the exact length of its data. */
  readonly ext: Readonly<Record<number, number>>;
}

/**
 * The limits frames between processes are read with. Real messages nest at
 * most 68 levels (a SpaceGeometry whose BSP tree is as deep as checkBsp allows,
 * 64 splits, inside the message and the geometry object); entity property
 * values nest far less. The largest real containers are spawn replies and
 * describeCell listings (one element per entity, 100,000 by default at most);
 * a describeCell listing of 150,000 entities holds about 2 million values.
 * The extensions are the two bigint ones of `wireCodec`.
 */
export const DEFAULT_MSGPACK_LIMITS: MsgpackLimits = Object.freeze({
  maxDepth: 100,
  maxLength: 1 << 20,
  maxItems: 1 << 21,
  costPerByte: 10,
  costAllowance: 64 * 1024,
  ext: Object.freeze({ 1: 8, 2: 8 }),
});

/** Longest map key the decoder's key cache holds, in bytes. */
export const KEY_CACHE_LENGTH = 16;
/** Keys of one length the decoder's key cache holds. */
export const KEY_CACHE_PER_LENGTH = 16;

/** Properties V8 keeps in fast mode on an object filled by keyed stores (4 in-object + 12). */
export const FAST_KEYS = 16;

/** The cost estimate of the last body `scanMsgpack` read to its end (for benchmarks). */
export function lastScanCost(): number {
  return lastCost;
}

// Scratch state, reused by every scan so that scanning allocates nothing.
let stackLeft = new Int32Array(128); // values still to read in each open container
let stackTotal = new Int32Array(128); // values the container holds (maps: keys and values)
let stackMap = new Uint8Array(128); // 1 for a map
let stackShape = new Int32Array(128); // a map's shape so far: 0 is {}, -1 unknown
let lastCost = 0;

// Distinct map keys of the body (open addressing; an entry is live when its
// generation is the current scan's), so that a key repeated in every object
// of a listing is charged once, as the decoder's key cache and V8's string
// table make it cost once.
const KEY_SLOTS = 4096;
const MAX_KEYS = KEY_SLOTS >> 1;
const keyGen = new Uint32Array(KEY_SLOTS);
const keyHash = new Int32Array(KEY_SLOTS);
const keyOff = new Int32Array(KEY_SLOTS);
const keyLen = new Int32Array(KEY_SLOTS);
const keyId = new Int32Array(KEY_SLOTS);
// Object shapes of the body, as V8 builds them: shape = transition(parent
// shape, key). Objects with the same keys in the same order share one.
const SHAPE_SLOTS = 16384;
const MAX_SHAPES = SHAPE_SLOTS >> 1;
const shapeGen = new Uint32Array(SHAPE_SLOTS);
const shapeParent = new Int32Array(SHAPE_SLOTS);
const shapeKey = new Int32Array(SHAPE_SLOTS);
const shapeId = new Int32Array(SHAPE_SLOTS);
// Per shape, the last key added to it and the shape that made, so that the
// objects of a listing, which repeat the same keys in the same order, cost a
// comparison of the key's bytes per key.
const memoGen = new Uint32Array(MAX_SHAPES + 1);
const memoOff = new Int32Array(MAX_SHAPES + 1);
const memoLen = new Int32Array(MAX_SHAPES + 1);
const memoChild = new Int32Array(MAX_SHAPES + 1);
// Distinct keys of each length up to KEY_CACHE_LENGTH in this body.
const keysOfLength = new Int32Array(KEY_CACHE_LENGTH + 1);
let gen = 0;
let keys = 0;
let shapes = 0;
let isNew = false;
// Whether some length has more distinct keys than the key cache holds.
let crowded = false;

/** The id of the string key at bytes[off, off + len) in this scan (-1 when the table is full); sets isNew. */
function lookUpKey(bytes: Uint8Array, off: number, len: number): number {
  let h = 0x811c9dc5 ^ len;
  for (let i = off, end = off + len; i < end; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  let slot = h & (KEY_SLOTS - 1);
  while (keyGen[slot] === gen) {
    if (keyHash[slot] === h && keyLen[slot] === len) {
      const o = keyOff[slot];
      let i = 0;
      while (i < len && bytes[o + i] === bytes[off + i]) i++;
      if (i === len) {
        isNew = false;
        return keyId[slot];
      }
    }
    slot = (slot + 1) & (KEY_SLOTS - 1);
  }
  isNew = true;
  if (len <= KEY_CACHE_LENGTH && ++keysOfLength[len] > KEY_CACHE_PER_LENGTH) crowded = true;
  if (keys >= MAX_KEYS) return -1;
  keyGen[slot] = gen;
  keyHash[slot] = h;
  keyOff[slot] = off;
  keyLen[slot] = len;
  keyId[slot] = keys;
  return keys++;
}

/** The shape after adding key `key` to shape `parent` (-1 when unknown); sets isNew when that shape is new. */
function transition(parent: number, key: number): number {
  if (parent < 0 || key < 0) {
    isNew = true;
    return -1;
  }
  let slot = Math.imul(parent ^ Math.imul(key, 0x9e3779b1), 0x85ebca6b) >>> 0 & (SHAPE_SLOTS - 1);
  while (shapeGen[slot] === gen) {
    if (shapeParent[slot] === parent && shapeKey[slot] === key) {
      isNew = false;
      return shapeId[slot];
    }
    slot = (slot + 1) & (SHAPE_SLOTS - 1);
  }
  isNew = true;
  if (shapes >= MAX_SHAPES) return -1;
  shapeGen[slot] = gen;
  shapeParent[slot] = parent;
  shapeKey[slot] = key;
  shapeId[slot] = ++shapes;
  return shapes;
}

// What each head byte starts: its kind, and the bytes that follow a scalar
// or the width of the length of a string, BLOB, extension or container.
const K_SCALAR = 0;
const K_FIXSTR = 1;
const K_STR = 2;
const K_BIN = 3;
const K_FIXEXT = 4;
const K_EXT = 5;
const K_FIXMAP = 6;
const K_FIXARRAY = 7;
const K_ARRAY = 8;
const K_MAP = 9;
const K_BAD = 10;
const HEAD_KIND = new Uint8Array(256);
const HEAD_ARG = new Uint8Array(256);
{
  const set = (from: number, to: number, kind: number, arg = 0) => {
    for (let b = from; b <= to; b++) {
      HEAD_KIND[b] = kind;
      HEAD_ARG[b] = arg;
    }
  };
  set(0x00, 0x7f, K_SCALAR);
  set(0x80, 0x8f, K_FIXMAP);
  set(0x90, 0x9f, K_FIXARRAY);
  set(0xa0, 0xbf, K_FIXSTR);
  set(0xc0, 0xc0, K_SCALAR);
  set(0xc1, 0xc1, K_BAD);
  set(0xc2, 0xc3, K_SCALAR);
  set(0xc4, 0xc4, K_BIN, 1);
  set(0xc5, 0xc5, K_BIN, 2);
  set(0xc6, 0xc6, K_BIN, 4);
  set(0xc7, 0xc7, K_EXT, 1);
  set(0xc8, 0xc8, K_EXT, 2);
  set(0xc9, 0xc9, K_EXT, 4);
  set(0xca, 0xca, K_SCALAR, 4);
  set(0xcb, 0xcb, K_SCALAR, 8);
  set(0xcc, 0xcc, K_SCALAR, 1);
  set(0xcd, 0xcd, K_SCALAR, 2);
  set(0xce, 0xce, K_SCALAR, 4);
  set(0xcf, 0xcf, K_SCALAR, 8);
  set(0xd0, 0xd0, K_SCALAR, 1);
  set(0xd1, 0xd1, K_SCALAR, 2);
  set(0xd2, 0xd2, K_SCALAR, 4);
  set(0xd3, 0xd3, K_SCALAR, 8);
  set(0xd4, 0xd4, K_FIXEXT, 1);
  set(0xd5, 0xd5, K_FIXEXT, 2);
  set(0xd6, 0xd6, K_FIXEXT, 4);
  set(0xd7, 0xd7, K_FIXEXT, 8);
  set(0xd8, 0xd8, K_FIXEXT, 16);
  set(0xd9, 0xd9, K_STR, 1);
  set(0xda, 0xda, K_STR, 2);
  set(0xdb, 0xdb, K_STR, 4);
  set(0xdc, 0xdc, K_ARRAY, 2);
  set(0xdd, 0xdd, K_ARRAY, 4);
  set(0xde, 0xde, K_MAP, 2);
  set(0xdf, 0xdf, K_MAP, 4);
  set(0xe0, 0xff, K_SCALAR);
}

/** The big-endian unsigned integer of `width` (1, 2 or 4) bytes at `pos`. */
function readLength(bytes: Uint8Array, pos: number, width: number): number {
  if (width === 1) return bytes[pos];
  if (width === 2) return (bytes[pos] << 8) | bytes[pos + 1];
  return ((bytes[pos] << 24) | (bytes[pos + 1] << 16) | (bytes[pos + 2] << 8) | bytes[pos + 3]) >>> 0;
}

function typeName(b: number): string {
  switch (HEAD_KIND[b]) {
    case K_FIXSTR:
    case K_STR:
      return "string";
    case K_BIN:
      return "bin";
    case K_FIXEXT:
    case K_EXT:
      return "extension";
    case K_FIXMAP:
    case K_MAP:
      return "map";
    case K_FIXARRAY:
    case K_ARRAY:
      return "array";
  }
  if (b === 0xc0) return "nil";
  if (b === 0xc2 || b === 0xc3) return "boolean";
  if (b === 0xca || b === 0xcb) return "float";
  return b === 0xc1 ? "0xc1 (never used)" : "integer";
}

/**
 * Checks that `bytes` is exactly one msgpack value within `limits`, and that
 * decoding it would cost no more than `limits.costPerByte` COST units per byte
 * plus `limits.costAllowance`. Returns null when it is, else why not (naming
 * the limit). Linear in the body's size; allocates nothing unless it refuses.
 */
export function scanMsgpack(bytes: Uint8Array, limits: MsgpackLimits = DEFAULT_MSGPACK_LIMITS): string | null {
  const end = bytes.length;
  if (end === 0) return "empty body: no msgpack value";
  const maxDepth = limits.maxDepth;
  const maxLength = limits.maxLength;
  const maxItems = limits.maxItems;
  const budget = limits.costPerByte * end + limits.costAllowance;
  if (stackLeft.length <= maxDepth + 1) {
    const size = maxDepth + 2;
    stackLeft = new Int32Array(size);
    stackTotal = new Int32Array(size);
    stackMap = new Uint8Array(size);
    stackShape = new Int32Array(size);
  }
  gen = (gen + 1) >>> 0;
  if (gen === 0) {
    keyGen.fill(0);
    shapeGen.fill(0);
    memoGen.fill(0);
    gen = 1;
  }
  if (keys !== 0) keysOfLength.fill(0);
  crowded = false;
  keys = 0;
  shapes = 0;
  lastCost = -1;
  let pos = 0;
  let cost = 0;
  // Values announced (the body's one included) and values read so far; each
  // value not read yet needs one byte at least.
  let declared = 1;
  let read = 0;
  // The open container, kept in locals; the ones around it are on the stack.
  // Level 0 is the body itself, holding one value.
  let sp = 0;
  let left = 1;
  let total = 1;
  let inMap = 0;
  let shape = 0;
  for (;;) {
    if (inMap === 0) {
      // Scalars in an array, the commonest values, without the general dispatch
      // (and with constant steps: parsing is one long chain of dependent loads,
      // and a predicted branch lets the next load start before this one is
      // done, where a table of steps would not).
      while (left !== 0 && pos < end) {
        const c = bytes[pos];
        if (c < 0x80 || c >= 0xe0) pos += 1;
        else if (c < 0xc0) break;
        else if (c === 0xcb || c === 0xcf || c === 0xd3) {
          pos += 9;
          cost += COST.number;
        } else if (c === 0xce || c === 0xca || c === 0xd2) {
          pos += 5;
          cost += COST.number;
        } else if (c === 0xcc || c === 0xd0) pos += 2;
        else if (c === 0xcd || c === 0xd1) pos += 3;
        else if (c === 0xc0 || c === 0xc2 || c === 0xc3) pos += 1;
        else break;
        left--;
        read++;
      }
      if (pos > end) return `truncated: a number runs past the end of the ${end}-byte body`;
    }
    if (left === 0) {
      if (sp === 0) break;
      sp--;
      left = stackLeft[sp];
      total = stackTotal[sp];
      inMap = stackMap[sp];
      shape = stackShape[sp];
      continue;
    }
    left--;
    read++;
    if (pos >= end) return `truncated: a value is missing at byte ${pos} (body of ${end} bytes)`;
    const at = pos;
    const b = bytes[pos++];
    // A map's key: the values left in a map are odd right after taking its key.
    if (inMap === 1 && (left & 1) === 1) {
      const kind = HEAD_KIND[b];
      if (kind === K_FIXSTR || kind === K_STR) {
        let len = b - 0xa0;
        if (kind === K_STR) {
          const w = HEAD_ARG[b];
          if (w > end - pos) return `truncated: string key length at byte ${at} (body of ${end} bytes)`;
          len = readLength(bytes, pos, w);
          pos += w;
        }
        if (len > end - pos) return `truncated: string key of ${len} bytes at byte ${at}, ${end - pos} left`;
        const entry = (total - 1 - left) >> 1;
        let known = false;
        if (shape >= 0 && entry < FAST_KEYS && memoGen[shape] === gen && memoLen[shape] === len) {
          const o = memoOff[shape];
          let i = 0;
          while (i < len && bytes[o + i] === bytes[pos + i]) i++;
          if (i === len) {
            shape = memoChild[shape];
            known = true;
          }
        }
        if (!known) {
          const id = lookUpKey(bytes, pos, len);
          if (isNew) cost += COST.newKey + COST.stringByte * len;
          known = !isNew;
          if (entry < FAST_KEYS) {
            const child = transition(shape, id);
            if (isNew) cost += COST.newShape + COST.shapeProperty * entry;
            if (shape >= 0 && child >= 0) {
              memoGen[shape] = gen;
              memoOff[shape] = pos;
              memoLen[shape] = len;
              memoChild[shape] = child;
            }
            shape = child;
          }
        }
        if (known) {
          if (len > KEY_CACHE_LENGTH) cost += stringCost(len);
          else if (crowded && keysOfLength[len] > KEY_CACHE_PER_LENGTH) cost += COST.keyMiss;
        }
        pos += len;
        if (cost > budget) return overBudget(cost, end, limits);
        continue;
      }
      if (kind !== K_SCALAR || (b > 0x7f && b < 0xe0 && (b < 0xcc || b > 0xd3))) {
        return `map key of type ${typeName(b)} at byte ${at} (keys must be strings or integers)`;
      }
      pos += HEAD_ARG[b];
      if (pos > end) return `truncated: integer key at byte ${at} (body of ${end} bytes)`;
      shape = -1;
      cost += COST.intKey;
      if (cost > budget) return overBudget(cost, end, limits);
      continue;
    }
    const kind = HEAD_KIND[b];
    let n: number; // elements or entries of a container
    let isMap = 0;
    switch (kind) {
      case K_SCALAR:
        // A map's value (an array's are read above).
        pos += HEAD_ARG[b];
        if (pos > end) return `truncated: number at byte ${at} (body of ${end} bytes)`;
        if (HEAD_ARG[b] >= 4) cost += COST.number;
        continue;
      case K_FIXARRAY:
        n = b - 0x90;
        break;
      case K_FIXMAP:
        n = b - 0x80;
        isMap = 1;
        break;
      case K_ARRAY:
      case K_MAP: {
        const w = HEAD_ARG[b];
        if (w > end - pos) return `truncated: ${typeName(b)} length at byte ${at} (body of ${end} bytes)`;
        n = readLength(bytes, pos, w);
        pos += w;
        isMap = kind === K_MAP ? 1 : 0;
        break;
      }
      case K_FIXSTR:
      case K_STR:
      case K_BIN: {
        let len = b - 0xa0;
        if (kind !== K_FIXSTR) {
          const w = HEAD_ARG[b];
          if (w > end - pos) return `truncated: ${typeName(b)} length at byte ${at} (body of ${end} bytes)`;
          len = readLength(bytes, pos, w);
          pos += w;
        }
        if (len > end - pos) return `truncated: ${typeName(b)} of ${len} bytes at byte ${at}, ${end - pos} left`;
        pos += len;
        cost += kind === K_BIN ? COST.bin : stringCost(len);
        if (cost > budget) return overBudget(cost, end, limits);
        continue;
      }
      case K_FIXEXT:
      case K_EXT: {
        let len = HEAD_ARG[b];
        if (kind === K_EXT) {
          if (len > end - pos) return `truncated: extension length at byte ${at} (body of ${end} bytes)`;
          const w = len;
          len = readLength(bytes, pos, w);
          pos += w;
        }
        if (pos >= end) return `truncated: extension type at byte ${at} (body of ${end} bytes)`;
        const type = (bytes[pos++] << 24) >> 24;
        const want = limits.ext[type];
        if (want === undefined) return `extension type ${type} at byte ${at} is not accepted`;
        if (len !== want) return `extension type ${type} at byte ${at} has ${len} bytes of data, not ${want}`;
        if (len > end - pos) return `truncated: extension of ${len} bytes at byte ${at}, ${end - pos} left`;
        pos += len;
        cost += COST.ext;
        if (cost > budget) return overBudget(cost, end, limits);
        continue;
      }
      default:
        return `0x${b.toString(16)} at byte ${at} is not a msgpack type`;
    }
    // An array or a map of n elements or entries, which sit one level deeper than it.
    if (n === 0) {
      cost += isMap ? COST.map : COST.array;
      if (cost > budget) return overBudget(cost, end, limits);
      continue;
    }
    const what = isMap ? "map" : "array";
    if (sp >= maxDepth) return `nesting deeper than ${maxDepth} levels (maxDepth) at byte ${at}`;
    if (n > maxLength) return `${what} of length ${n} at byte ${at} exceeds maxLength (${maxLength})`;
    const values = isMap ? 2 * n : n;
    declared += values;
    if (declared > maxItems) return `more than ${maxItems} values (maxItems): ${what} at byte ${at}`;
    if (declared - read > end - pos) {
      return `truncated: ${what} of length ${n} at byte ${at} cannot fit in the ${end - pos} bytes left`;
    }
    if (isMap) {
      cost += COST.map + COST.fastEntry * (n < FAST_KEYS ? n : FAST_KEYS) +
        (n > FAST_KEYS ? COST.dictEntry * (n - FAST_KEYS) : 0);
    } else {
      cost += COST.array + COST.slot * n;
    }
    if (cost > budget) return overBudget(cost, end, limits);
    stackLeft[sp] = left;
    stackTotal[sp] = total;
    stackMap[sp] = inMap;
    stackShape[sp] = shape;
    sp++;
    left = total = values;
    inMap = isMap;
    shape = 0;
  }
  if (pos !== end) return `${end - pos} trailing bytes after the value (at byte ${pos} of ${end})`;
  lastCost = cost;
  return cost > budget ? overBudget(cost, end, limits) : null;
}

function overBudget(cost: number, size: number, limits: MsgpackLimits): string {
  return `decoding would cost about ${cost} bytes, over the limit of ${limits.costPerByte} per byte of the ${size}-byte body plus ${limits.costAllowance} (costPerByte, costAllowance)`;
}
