import assert from "node:assert/strict";
import { BaseMsg, CellMsg, type Channel, dial, MgrMsg, WireServer } from "../../core/wire/mod.ts";
import { ByteWriter, decodePersistentState, encodeCellBackup, PropertyContainer } from "../../core/def/mod.ts";
import { registry } from "../../entities/mod.ts";
import type { CellEntityView, EntityView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";
import { playAlong } from "../helpers/fake_member.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

/**
 * Plays the baseapp's part over the real wire: asks the cellappmgr for cell
 * entities and listens for what cellapps tell their bases.
 */
Deno.test(
  "a base's cell entity: created through the cellappmgr, driven by the client's calls, destroyed with its persistent state",
  opts,
  async () => {
    await using procs = new Procs();
    const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0"]);
    const admin = mgr.ready.admin!;
    await procs.start(["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`]);
    await waitFor("the default space", async () => (await api(admin, "/api/spaces/1")).status === 200);

    const told: string[] = [];
    const refused: string[] = [];
    const handlers = playAlong("baseapp")
      .on(BaseMsg.cellEntityDestroyed, (_ch, id, why) => void told.push(`destroyed ${id}: ${why}`))
      .on(
        BaseMsg.clientError,
        (_ch, id, code, about, message) => void refused.push(`${id} ${code} ${about} ${message}`),
      )
      .on(BaseMsg.toClient, () => {})
      .on(BaseMsg.toClients, () => {});
    const base = new WireServer({ host: "127.0.0.1", port: 0, role: "baseapp", handlers });
    const channels: Channel[] = [];
    try {
      const toMgr = await dial(mgr.ready.address!, { role: "baseapp", address: base.address, handlers });
      channels.push(toMgr);
      await toMgr.request(MgrMsg.register, {
        role: "baseapp",
        pid: Deno.pid,
        address: base.address,
        previousId: null,
        clientUrl: null,
        startedAt: Date.now(),
        entityIdHighWater: 0,
      });
      const [first] = await toMgr.request(MgrMsg.allocateIds, 2);
      const avatar = registry.get("Avatar");
      const cellProps = new PropertyContainer(avatar, "cell", { entityId: first });
      cellProps.set("level", 7);
      cellProps.set("playerName", "Ada");
      const spec = {
        spaceId: 1,
        entityId: first,
        type: "Avatar",
        position: [10, 0, 20] as [number, number, number],
        direction: [0.5, 0, 0] as [number, number, number],
        props: encodeCellBackup(cellProps),
        baseAddress: base.address,
        hasClient: true,
      };
      const where = await toMgr.request(MgrMsg.createCellEntity, spec);
      assert.equal(where.spaceId, 1);
      // Asked again (as a base does when its first answer was lost with a cellappmgr that died): the same entity.
      assert.deepEqual(await toMgr.request(MgrMsg.createCellEntity, spec), where);
      const listed = (await api(admin, `/api/cellapps/${where.cellapp}/cells/1`)).body as {
        entities: CellEntityView[];
      };
      assert.equal(listed.entities.filter((e) => e.id === spec.entityId).length, 1, "made once");
      const found = (await api(admin, `/api/entities/${spec.entityId}`)).body as EntityView;
      assert.deepEqual([found.type, found.spaceId, found.cellapp, found.position], ["Avatar", 1, where.cellapp, [
        10,
        0,
        20,
      ]]);

      // A new space for another base (createInNewSpace).
      const other = await toMgr.request(MgrMsg.createCellEntity, {
        ...spec,
        spaceId: 0,
        entityId: first + 1,
        props: new Uint8Array(),
      });
      assert.ok(other.spaceId > 1, `a new space ${other.spaceId}`);
      const inNew = ((await api(admin, `/api/cellapps/${other.cellapp}/cells/${other.spaceId}`)).body as {
        entities: CellEntityView[];
      }).entities;
      assert.deepEqual(inNew.map((e) => e.id), [first + 1]);

      const cell = await dial(where.cellappAddress, { role: "baseapp", address: base.address, handlers });
      channels.push(cell);
      // The client moves its avatar; the cell applies it.
      cell.send(CellMsg.clientPosition, spec.entityId, [12, 0, 21], [1, 0, 0]);
      await waitFor("the move", async () => {
        const e = (await api(admin, `/api/entities/${spec.entityId}`)).body as EntityView;
        return e.position[0] === 12 && e.position[2] === 21;
      });
      // An unexposed method, or arguments of the wrong shape, are refused: the base hears it, to tell its client.
      const call = (index: number, args: Uint8Array, typeId = avatar.id) =>
        cell.send(CellMsg.clientCall, spec.entityId, spec.entityId, typeId, index, args, base.address, 0, false);
      const takeDamage = avatar.method("cell", "takeDamage");
      call(takeDamage.index, new Uint8Array());
      await waitFor("the refusal", () => refused.length === 1);
      assert.match(refused[0], new RegExp(`^${first} \\d+ 4 .*not exposed`));
      const useItem = avatar.method("cell", "useItem");
      const args = new ByteWriter();
      useItem.args[0].type.write(args, 3);
      const good = args.toBytes();
      call(useItem.index, good);
      call(useItem.index, new Uint8Array([1, 2, 3]));
      call(99, new Uint8Array());
      call(useItem.index, good, avatar.id + 1);
      await waitFor("three more refusals", () => refused.length === 4);
      assert.match(refused[1], /bytes left after the declared arguments/);
      assert.match(refused[2], /no cell method with index 99/);
      assert.match(refused[3], /is a Avatar, not type/);

      // Logout: the cell entity goes and its persistent cell properties come back.
      const state = await cell.request(CellMsg.destroyCellEntity, spec.entityId);
      assert.ok(state instanceof Uint8Array);
      const back = new PropertyContainer(avatar, "cell");
      decodePersistentState(state, back);
      assert.equal(back.get("level"), 7);
      assert.equal(back.get("playerName"), "Ada");
      assert.equal((await api(admin, `/api/entities/${spec.entityId}`)).status, 404);
      assert.deepEqual(told, [], "a destroy the base asked for is not reported back");

      // A space shutting down destroys the cell entity and tells its base.
      const del = await api(admin, `/api/spaces/${other.spaceId}`, {
        method: "DELETE",
        headers: { "content-type": "application/json" },
      });
      assert.equal(del.status, 202, JSON.stringify(del.body));
      await waitFor("the base to hear", () => told.length > 0);
      assert.deepEqual(told, [`destroyed ${first + 1}: space ${other.spaceId} shut down`]);
    } finally {
      for (const ch of channels) ch.close("test over");
      base.close();
    }
  },
);
