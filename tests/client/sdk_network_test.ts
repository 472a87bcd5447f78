/**
 * The SDK's update events over the network: real cellappmgr, cellapp and baseapp processes, SDK WebSocket clients.
 * A property event names its change path and how the entity was named; a detail-level change lists what it
 * delivered; hasReceived says whether a NEAR property is current; the reference position and error bound are there.
 */
import assert from "node:assert/strict";
import { type Client, connect, type PropertyUpdate } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import { Procs } from "../../testing/procs.ts";
import { cellReady, entityAt, seen, startBaseProcess, startCluster } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function moveTo(c: Client, admin: string, x: number): Promise<void> {
  c.move({ x, y: 0, z: 0 });
  await waitFor(`${c.player.id} at x=${x}`, async () => (await entityAt(admin, c.player.id))?.position[0] === x);
}

Deno.test(
  "SDK clients get change paths, alias or id, delivered properties, hasReceived and the error bound",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs);
    const { clientUrl } = await startBaseProcess(procs, cluster, ["--max-speed=1000"]);
    const player = (name: string, x: number) =>
      connect(clientUrl, { name, password: "pw", position: { x, y: 0, z: 0 } }, { registry });
    const observer = await player("observer", 0);
    await cellReady(observer);
    const b = await player("walker", 100);
    await cellReady(b);
    const bId = b.player.id;
    const bSeen = await seen(observer, bId);
    await waitFor("the walker at the FAR level", () => bSeen.detailLevel === 1);

    const updates: [string, PropertyUpdate][] = [];
    const levels: [number, string[]][] = [];
    const moves: boolean[] = [];
    observer.on("property", (e, name, _v, update) => e.id === bId && updates.push([name, update]));
    observer.on("detailLevel", (e, level, delivered) => e.id === bId && levels.push([level, delivered]));
    observer.on("move", (e, how) => e.id === bId && moves.push(how.byAlias));

    assert.equal(observer.hasReceived(bId, "hp"), false, "hp is NEAR: not kept at 100 m");
    assert.equal(observer.hasReceived(bId, "level"), true);
    b.callCell(null, "raiseCounter");
    await waitFor("the counter's update", () => updates.length > 0);
    assert.deepEqual(updates[0][0], "counter");
    assert.equal(updates[0][1].path, "counter");
    assert.deepEqual(updates[0][1].indices, []);
    assert.equal(updates[0][1].kind, "set");
    assert.equal(updates[0][1].byAlias, true, "an entity in the AoI is named by its alias");

    await moveTo(b, cluster.admin, 20);
    await waitFor("the NEAR level", () => levels.some(([l]) => l === 0));
    const near = levels.find(([l]) => l === 0)!;
    assert.ok(near[1].includes("hp"), `the change to NEAR delivered hp: ${near[1]}`);
    assert.equal(observer.hasReceived(bId, "hp"), true);
    assert.equal(bSeen.props.hp, 100);
    await waitFor("a move of the walker", () => moves.length > 0);
    assert.ok(moves.every((m) => m), "moves under the alias too");

    const worst = observer.positionErrorBound();
    assert.ok(worst.x > 0 && worst.x < 5, `worst-case error ${worst.x} m`);
    const here = observer.positionErrorBound(bSeen.position);
    assert.ok(here.x <= worst.x && Math.abs(bSeen.position.x - 20) <= here.x, `${bSeen.position.x} within ${here.x}`);
    assert.equal(typeof observer.reference.x, "number");
    observer.close();
    b.close();
  },
);
