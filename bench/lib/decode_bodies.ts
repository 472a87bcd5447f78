/** The bodies `deno task bench decode` decodes: hostile msgpack shapes written byte by byte, and real messages. */
import { type BspNode, buildBsp } from "../../core/geo/bsp.ts";
import type { EntitySummary, GhostState, OffloadState, SpaceGeometry, WitnessState } from "../../core/wire/mod.ts";

// ---------------------------------------------------------------------------
// Hostile bodies, written byte by byte.

/** Items per chunk: below maxLength, as an attacker would keep them, so that the item or cost limit has to refuse the body. */
const CHUNK = 0xffff;

/**
 * A body of about `size` bytes: an array of arrays of CHUNK items, each item
 * `per` bytes on average, written by `item`.
 */
function items(size: number, per: number, item: (b: Uint8Array, v: DataView, o: number, i: number) => number) {
  const chunks = Math.ceil(size / per / CHUNK);
  const n = Math.floor((size - 5 - 3 * chunks) / per);
  const b = new Uint8Array(size + 16);
  const v = new DataView(b.buffer);
  b[0] = 0xdd;
  v.setUint32(1, Math.ceil(n / CHUNK));
  let o = 5;
  for (let i = 0; i < n; i++) {
    if (i % CHUNK === 0) {
      b[o] = 0xdc;
      v.setUint16(o + 1, Math.min(CHUNK, n - i));
      o += 3;
    }
    o = item(b, v, o, i);
  }
  return b.subarray(0, o);
}

/** Writes a fixstr of `len` bytes spelling `i` in base 64 (distinct for distinct i below 64^len). */
function key(b: Uint8Array, o: number, i: number, len: number): number {
  b[o++] = 0xa0 + len;
  for (let k = 0; k < len; k++) {
    b[o++] = 0x30 + (i % 64);
    i = Math.floor(i / 64);
  }
  return o;
}

let seed = 0x5eed;
function random(): number {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 2 ** 32;
}

/** Hostile bodies by name: what each is, and a body of about `size` bytes. */
export const HOSTILE: Record<string, { what: string; body: (size: number) => Uint8Array }> = {
  deep: {
    what: "arrays nested one in the other (0x91 0x91 ... nil)",
    body: (s) => {
      const b = new Uint8Array(s).fill(0x91);
      b[s - 1] = 0xc0;
      return b;
    },
  },
  emptyArrays: {
    what: "arrays of empty arrays (1 byte each)",
    body: (s) => items(s, 1, (b, _v, o) => (b[o] = 0x90, o + 1)),
  },
  emptyMaps: {
    what: "arrays of empty maps (1 byte each)",
    body: (s) => items(s, 1, (b, _v, o) => (b[o] = 0x80, o + 1)),
  },
  oneElementArrays: {
    what: "arrays of [0] (2 bytes each)",
    body: (s) => items(s, 2, (b, _v, o) => (b[o] = 0x91, b[o + 1] = 0, o + 2)),
  },
  fixints: {
    what: "arrays of positive fixints (1 byte each)",
    body: (s) => items(s, 1, (b, _v, o, i) => (b[o] = i & 0x7f, o + 1)),
  },
  chars: {
    what: "arrays of 1-character ASCII strings (2 bytes each)",
    body: (s) => items(s, 2, (b, _v, o, i) => (b[o] = 0xa1, b[o + 1] = 0x20 + i % 90, o + 2)),
  },
  wideChars: {
    what: "arrays of 1-character strings outside Latin-1 (3 bytes each)",
    body: (s) =>
      items(s, 3, (b, _v, o, i) => {
        b[o] = 0xa2;
        b[o + 1] = 0xc4 + i % 20;
        b[o + 2] = 0x80 + i % 64;
        return o + 3;
      }),
  },
  strings: {
    what: "arrays of 150-byte ASCII strings (decoded one character at a time)",
    body: (s) =>
      items(s, 152, (b, _v, o, i) => {
        b[o] = 0xd9;
        b[o + 1] = 150;
        b.fill(0x61 + i % 26, o + 2, o + 152);
        return o + 152;
      }),
  },
  bins: {
    what: "arrays of empty BLOBs (2 bytes each)",
    body: (s) => items(s, 2, (b, _v, o) => (b[o] = 0xc4, b[o + 1] = 0, o + 2)),
  },
  floats: {
    what: "arrays of float32 and nil by turns (boxed numbers, 3 bytes each on average)",
    body: (s) =>
      items(s, 3, (b, v, o, i) => {
        if (i & 1) return (b[o] = 0xc0, o + 1);
        b[o] = 0xca;
        v.setFloat32(o + 1, i + 0.5);
        return o + 5;
      }),
  },
  bigints: {
    what: "arrays of int64 extensions (10 bytes each)",
    body: (s) =>
      items(s, 10, (b, v, o, i) => {
        b[o] = 0xd7;
        b[o + 1] = 1;
        v.setBigInt64(o + 2, BigInt(i) << 40n);
        return o + 10;
      }),
  },
  manyKeys: {
    what: "maps of 65,535 entries with distinct 4-character keys (6 bytes an entry)",
    body: (s) => {
      const n = Math.floor((s - 5) / (6 + 3 / CHUNK));
      const b = new Uint8Array(s);
      const v = new DataView(b.buffer);
      b[0] = 0xdd;
      v.setUint32(1, Math.ceil(n / CHUNK));
      let o = 5;
      for (let i = 0; i < n; i++) {
        if (i % CHUNK === 0) {
          b[o] = 0xde;
          v.setUint16(o + 1, Math.min(CHUNK, n - i));
          o += 3;
        }
        o = key(b, o, i, 4);
        b[o++] = 0;
      }
      return b.subarray(0, o);
    },
  },
  distinctKeyMaps: {
    what: "arrays of maps {key: 0}, every key different (7 bytes each)",
    body: (s) =>
      items(s, 7, (b, _v, o, i) => {
        b[o++] = 0x81;
        o = key(b, o, i, 4);
        b[o++] = 0;
        return o;
      }),
  },
  shuffledMaps: {
    what: "arrays of maps of 15 keys out of 64, in random orders (new object shapes)",
    body: (s) => {
      const per = 1 + 15 * 3;
      return items(s, per, (b, _v, o) => {
        b[o++] = 0x8f;
        const used = new Set<number>();
        for (let k = 0; k < 15; k++) {
          let c: number;
          do c = Math.floor(random() * 64); while (used.has(c));
          used.add(c);
          b[o++] = 0xa1;
          b[o++] = 0x30 + c;
          b[o++] = 0;
        }
        return o;
      });
    },
  },
  dictionaryMaps: {
    what: "arrays of maps with the same 40 keys (V8 makes them dictionaries)",
    body: (s) => {
      const per = 3 + 40 * 4;
      return items(s, per, (b, _v, o) => {
        b[o++] = 0xde;
        b[o++] = 0;
        b[o++] = 40;
        for (let k = 0; k < 40; k++) {
          o = key(b, o, k, 2);
          b[o++] = 0;
        }
        return o;
      });
    },
  },
  intKeyMaps: {
    what: "arrays of maps {uint32 key: 0}, every key different (7 bytes each)",
    body: (s) =>
      items(s, 7, (b, v, o, i) => {
        b[o++] = 0x81;
        b[o++] = 0xce;
        v.setUint32(o, 1_000_000 + i * 7919);
        o += 4;
        b[o++] = 0;
        return o;
      }),
  },
  hugeArray: {
    what: "5-byte body: an array32 header claiming 100 million elements",
    body: () => Uint8Array.of(0xdd, 0x05, 0xf5, 0xe1, 0x00),
  },
  hugeMap: {
    what: "5-byte body: a map32 header claiming 100 million entries",
    body: () => Uint8Array.of(0xdf, 0x05, 0xf5, 0xe1, 0x00),
  },
  hugeString: {
    what: "5-byte body: a str32 header claiming 4 GiB",
    body: () => Uint8Array.of(0xdb, 0xff, 0xff, 0xff, 0xff),
  },
};

/** Hostile shapes whose size is fixed (a few bytes) rather than 1 or 16 MiB. */
export const FIXED_SIZE: ReadonlySet<string> = new Set(["hugeArray", "hugeMap", "hugeString"]);

// ---------------------------------------------------------------------------
// Real messages, framed as a channel frames them: [kind, reqId, ...args].

function bytesOf(n: number, fill: number): Uint8Array {
  return new Uint8Array(n).fill(fill);
}

function ghostState(): GhostState {
  return {
    spaceId: 7,
    cellId: 2,
    id: 1_000_123,
    type: "Avatar",
    position: [1234.5, 12.25, -873.125],
    direction: [1.5, 0, 0.25],
    isOnGround: true,
    props: bytesOf(600, 3),
    syncSeq: 81234,
    epoch: 2,
    realCellapp: 3,
    realAddress: "10.0.0.12:41234",
    realCell: 1,
    baseAddress: "10.0.0.20:41000",
    history: {
      lastSeq: 5000,
      trimmedTo: 4950,
      propStamps: Array.from({ length: 24 }, (_, i) => 4950 + i),
      events: Array.from(
        { length: 50 },
        (_, i) =>
          [4951 + i, i % 24, i % 3, 50 + i, bytesOf(6 + i % 10, i)] as [
            number,
            number,
            number,
            number,
            Uint8Array,
          ],
      ),
    },
  };
}

function witnessState(caches: number): WitnessState {
  const opts: Record<string, number> = {};
  for (const name of ["aoiRadius", "hysteresis", "byteBudget", "maxCreates", "historyHorizonMs", "lodNear", "lodFar"]) {
    opts[name] = 100 + name.length;
  }
  for (let i = 0; i < 18; i++) opts[`weight${i}`] = 0.5 + i;
  const stats: Record<string, number> = {};
  for (
    const name of [
      "frames",
      "bytes",
      "enters",
      "creates",
      "leaves",
      "propertyEvents",
      "methodEvents",
      "detailChanges",
      "refreshes",
      "volatileUpdates",
      "fullPositions",
      "sends",
      "badInputs",
      "timeouts",
    ]
  ) stats[name] = 1000 + name.length;
  return {
    opts,
    reference: [100.5, 0, 200.25, 0.01, 1],
    caches: Array.from({ length: caches }, (_, i) => ({
      id: 2_000_000 + i,
      record: Array.from({ length: 21 }, (_, k) => (k % 4 === 0 ? 1234.5 + i + k / 8 : (i + k) % 200)),
      stamps: [4000 + i, 3990 + i, 3900 + i],
      queued: i % 3 === 0 ? -1 : i * 7,
    })),
    freeAliases: Array.from({ length: 200 }, (_, i) => 255 - i),
    own: bytesOf(1500, 9),
    stats,
  };
}

function offloadState(): OffloadState {
  return {
    spaceId: 7,
    cellId: 3,
    entity: {
      id: 1_000_123,
      type: "Avatar",
      position: [1234.5, 12.25, -873.125],
      direction: [1.5, 0, 0.25],
      isOnGround: true,
      props: bytesOf(2000, 4),
      controllers: [
        { kind: "timer", id: 1, start: 1234.5, interval: 1000, userArg: 0 },
        { kind: "move", id: 2, target: [100, 0, 200], speed: 5, faceMovement: true },
        { kind: "range", id: 3, range: 20, userArg: 7 },
      ],
      nextControllerId: 4,
    },
    syncSeq: 81234,
    ghosts: [[1, "10.0.0.11:40000", 1], [2, "10.0.0.12:40000", 2], [3, "10.0.0.13:40000", 3]],
    from: [1, "10.0.0.11:40000", 1],
    baseAddress: "10.0.0.20:41000",
    hasClient: true,
    epoch: 3,
    witness: witnessState(300),
  };
}

function entitySummaries(n: number): EntitySummary[] {
  return Array.from({ length: n }, (_, i) => ({
    id: 100_001 + i,
    type: i % 5 === 0 ? "Avatar" : "NPC",
    position: [random() * 1000, 0, random() * 1000],
    real: i % 4 !== 0,
    cell: 1 + i % 4,
  }));
}

/** The deepest tree checkBsp accepts: 64 splits in a row, then two cells. */
function chainTree(splits: number): BspNode {
  let node: BspNode = { cell: { id: splits + 1, cellapp: 1 } };
  for (let i = splits; i >= 1; i--) {
    node = { axis: i % 2 ? "x" : "z", at: 1000 - i, left: { cell: { id: i, cellapp: 1 + i % 8 } }, right: node };
  }
  return node;
}

function geometry(tree: BspNode): SpaceGeometry {
  return {
    spaceId: 9,
    bounds: [0, 0, 10_000, 10_000],
    tree,
    isDefault: false,
    cellapps: Array.from({ length: 64 }, (_, i) => [i + 1, `10.0.1.${i + 1}:40000`] as [number, string]),
  };
}

/** Real messages by name: what each is, and the frame's value `[kind, reqId, ...args]`. */
export const LEGIT: Record<string, { what: string; frame: () => unknown[] }> = {
  ghostState: {
    what: "createGhost: a GhostState with 600 bytes of props and 50 history events",
    frame: () => [93, 17, ghostState()],
  },
  offload: {
    what: "offload: an OffloadState with a WitnessState of 300 caches",
    frame: () => [97, 18, offloadState()],
  },
  describeCell: {
    what: "describeCell reply: 10,000 EntitySummary",
    frame: () => [6, 19, entitySummaries(10_000)],
  },
  describeCell100k: {
    what: "describeCell reply: 100,000 EntitySummary (the default entity limit)",
    frame: () => [6, 19, entitySummaries(100_000)],
  },
  spawnReply: {
    what: "spawn reply: 10,000 entity ids",
    frame: () => [6, 20, Array.from({ length: 10_000 }, (_, i) => 100_001 + i)],
  },
  spawnReply100k: {
    what: "spawn reply: 100,000 entity ids (the largest spawn)",
    frame: () => [6, 20, Array.from({ length: 100_000 }, (_, i) => 100_001 + i)],
  },
  ghostSync: {
    what: "ghostSync: one volatile, one property and one history op",
    frame: () => [94, 0, 7, 2, 1_000_123, 81235, [
      [0, 1234.5, 12.25, -873.125, 1.5, 0, 0.25, true],
      [1, bytesOf(12, 1)],
      [2, 5001, 3, 1, 50, bytesOf(12, 2)],
    ]],
  },
  geometry64: {
    what: "createCell: a SpaceGeometry of 64 cells (buildBsp)",
    frame: () => [80, 21, geometry(buildBsp({ minX: 0, minZ: 0, maxX: 10_000, maxZ: 10_000 }, Array(64).fill(1)))],
  },
  geometryDeepest: {
    what: "createCell: a SpaceGeometry whose tree is as deep as checkBsp allows (64 splits)",
    frame: () => [80, 22, geometry(chainTree(64))],
  },
};
