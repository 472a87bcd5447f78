import assert from "node:assert/strict";
import { Loopback } from "../../cell/loopback.ts";
import { CellMsg, type MessageDef } from "../../core/wire/mod.ts";

Deno.test("loopback: messages to the cellapp itself arrive in order, after the sender's code, copied", async () => {
  const got: [string, unknown[]][] = [];
  const errors: string[] = [];
  const lb = new Loopback((def: MessageDef<unknown[], unknown>, args: unknown[]) => {
    got.push([def.name, args]);
    if (def === CellMsg.offload) throw new Error("no ghost there");
    if (def === CellMsg.deleteGhost) lb.send(CellMsg.ghostSync, [9, 1, 5, 3, []]); // a handler sending on
    return true;
  }, (e) => errors.push(e.message));
  const ops = [[1, new Uint8Array([1, 2])]];
  const created = lb.ask(CellMsg.createGhost, [{ id: 5 } as never]);
  lb.send(CellMsg.ghostSync, [9, 1, 5, 1, ops]);
  (ops[0][1] as Uint8Array)[0] = 99; // the sender reuses its buffer
  lb.send(CellMsg.ghostSync, [9, 1, 5, 2, []]);
  lb.send(CellMsg.deleteGhost, [9, 1, 5]);
  assert.equal(got.length, 0, "nothing runs inside the sender's code");
  assert.equal(await created, true);
  assert.deepEqual(got.map(([n, a]) => [n, n === "ghostSync" ? a[3] : null]), [
    ["createGhost", null],
    ["ghostSync", 1],
    ["ghostSync", 2],
    ["deleteGhost", null],
    ["ghostSync", 3],
  ]);
  assert.equal(((got[1][1][4] as unknown[][])[0][1] as Uint8Array)[0], 1, "arguments were copied when sent");
  await assert.rejects(lb.ask(CellMsg.offload, [{} as never]), /no ghost there/);
  lb.send(CellMsg.offload, [{} as never]);
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(errors, ["no ghost there"]);
});
