import assert from "node:assert/strict";
import {
  type CellBackup,
  type CellBackupRecord,
  decodeBackup,
  decodeNpcBackup,
  encodeGhostOps,
  type GhostOp,
  type GhostSyncRecord,
  type NpcBackupRecord,
  readCellBackups,
  readGhostSyncs,
  readNpcBackups,
  writeCellBackup,
  writeGhostSync,
  writeNpcBackup,
} from "../../core/wire/mod.ts";
import { ByteWriter } from "../../core/bytes/mod.ts";

const ops: GhostOp[] = [
  [0, 1.5, -2.25, 3, 0.5, 0, -0.25, true],
  [1, new Uint8Array([7, 8, 9])],
  [2, 12, 3, 1, Infinity, new Uint8Array([1, 2])],
  [0, 4, 5, 6, 0, 0, 0, false],
];

function records(...recs: [number, number, number, number, GhostOp[]][]): Uint8Array {
  const w = new ByteWriter();
  for (const [space, cell, id, seq, o] of recs) {
    const enc = new ByteWriter();
    encodeGhostOps(enc, o);
    writeGhostSync(w, space, cell, id, seq, enc.bytes());
  }
  return w.toBytes();
}

Deno.test("ghostSyncs records carry each batch as a ghostSync message would, in order", () => {
  const got: GhostSyncRecord[] = [];
  const bad = readGhostSyncs(records([1, 2, 300, 5, ops], [7, 1, 2 ** 40, 0, []]), (r) => got.push(r));
  assert.equal(bad, null);
  assert.deepEqual(got, [
    { spaceId: 1, cellId: 2, id: 300, seq: 5, ops },
    { spaceId: 7, cellId: 1, id: 2 ** 40, seq: 0, ops: [] },
  ]);
});

Deno.test("a ghostSyncs batch with a bad record is refused whole", () => {
  const good = records([1, 2, 300, 5, ops]);
  const seen: number[] = [];
  // Cut short: the second record ends inside its ops.
  const both = records([1, 2, 300, 5, ops], [1, 2, 301, 6, ops]);
  assert.match(readGhostSyncs(both.subarray(0, both.length - 3), (r) => seen.push(r.id))!, /record 1: truncated/);
  // An entity id of 0, an op of an unknown kind, a cell id out of range.
  assert.match(readGhostSyncs(records([1, 2, 0, 5, []]), (r) => seen.push(r.id))!, /entity id 0 out of range/);
  const unknown = new Uint8Array([...good.subarray(0, 5), 1, 9]);
  assert.match(readGhostSyncs(unknown, (r) => seen.push(r.id))!, /unknown kind 9/);
  assert.match(readGhostSyncs(records([1, 2 ** 31 + 1, 3, 5, []]), (r) => seen.push(r.id))!, /cell id/);
  assert.deepEqual(seen, [], "nothing of a refused batch is acted on");
});

const backup: CellBackup = {
  spaceId: 3,
  epoch: 2,
  entity: {
    id: 41,
    type: "NPC",
    position: [1, 2, 3],
    direction: [0, 0.5, 0],
    isOnGround: true,
    props: new Uint8Array([1, 2, 3]),
    controllers: [],
    nextControllerId: 1,
  },
};

Deno.test("npcBackups records keep each backup's bytes, decoded only when read", () => {
  const w = new ByteWriter();
  writeNpcBackup(w, backup);
  writeNpcBackup(w, { ...backup, entity: { ...backup.entity, id: 42 } });
  const got: NpcBackupRecord[] = [];
  assert.equal(readNpcBackups(w.toBytes(), (r) => got.push(r)), null);
  assert.deepEqual(got.map((r) => [r.spaceId, r.id]), [[3, 41], [3, 42]]);
  const back = decodeNpcBackup(got[0]);
  assert.equal(back.entity.id, 41);
  assert.equal(back.epoch, 2);
  assert.deepEqual(back.entity.position, [1, 2, 3]);
});

Deno.test("an NPC backup that is not what its record names is refused when read", () => {
  const w = new ByteWriter();
  writeNpcBackup(w, backup);
  const [rec] = ((): NpcBackupRecord[] => {
    const out: NpcBackupRecord[] = [];
    readNpcBackups(w.toBytes(), (r) => out.push(r));
    return out;
  })();
  assert.throws(() => decodeNpcBackup({ ...rec, id: 40 }), /holds entity 41/);
  assert.throws(() => decodeNpcBackup({ ...rec, bytes: new Uint8Array([0xc1]) }), /entity 41/);
  assert.throws(() => decodeNpcBackup({ ...rec, bytes: new Uint8Array([0x90]) }), /refused/);
  // A batch that is cut short is refused whole.
  assert.match(readNpcBackups(w.toBytes().subarray(0, 6), () => assert.fail("acted on"))!, /record 0/);
});

Deno.test("cellBackups records carry the base, the epoch and the last client call ahead of the backup's bytes", () => {
  const w = new ByteWriter();
  writeCellBackup(w, 41, { ...backup, entity: { ...backup.entity, clientCallSeq: 9 } });
  writeCellBackup(w, 42, { ...backup, epoch: 5, entity: { ...backup.entity, id: 42 } });
  const got: CellBackupRecord[] = [];
  assert.equal(readCellBackups(w.toBytes(), (r) => got.push(r)), null);
  assert.deepEqual(got.map((r) => [r.id, r.spaceId, r.epoch, r.clientCallSeq]), [[41, 3, 2, 9], [42, 3, 5, 0]]);
  const back = decodeBackup(got[1].bytes, 42, 3);
  assert.equal(back.epoch, 5);
  assert.deepEqual(back.entity.position, [1, 2, 3]);
  // Read as another entity's, or of another space, the bytes are refused.
  assert.throws(() => decodeBackup(got[1].bytes, 41), /holds entity 42/);
  assert.throws(() => decodeBackup(got[1].bytes, 42, 4), /holds entity 42 of space 3/);
});

Deno.test("a cellBackups batch with a bad record is refused whole", () => {
  const w = new ByteWriter();
  writeCellBackup(w, 41, backup);
  const good = w.toBytes();
  const acted = () => assert.fail("acted on");
  assert.match(readCellBackups(good.subarray(0, good.length - 1), acted)!, /record 0/);
  const zeroId = new ByteWriter();
  writeCellBackup(zeroId, 41, backup);
  const bytes = zeroId.toBytes();
  bytes[0] = 0; // the base's id
  assert.match(readCellBackups(bytes, acted)!, /entity id 0 out of range/);
  const twice = new ByteWriter();
  writeCellBackup(twice, 41, backup);
  twice.varint(41);
  twice.varint(0); // space 0
  assert.match(readCellBackups(twice.toBytes(), acted)!, /record 1/);
});
