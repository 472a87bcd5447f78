/**
 * The clients load-generating bots are made of. One without AoI events (aoiEvents: false, what most bots are)
 * answers enters as a player's client does, so the server sends it the same traffic as a watching client beside
 * it, yet it raises no per-entity event. One that does not decode (decodeAoi: false) answers nothing, and so gets
 * an enter and then nothing of the entity until the witness's request timeout (5 s) has passed.
 */
import assert from "node:assert/strict";
import { type Client, connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import { Procs } from "../../testing/procs.ts";
import { cellReady, seen, startBaseProcess, startCluster } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test(
  "a client without AoI events gets the traffic a watching one gets and raises no event; one not decoding gets less",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs);
    const { clientUrl } = await startBaseProcess(procs, cluster);
    const player = (name: string, x: number, o: { decodeAoi?: boolean; aoiEvents?: boolean }) =>
      connect(clientUrl, { name, password: "pw", position: { x, y: 0, z: 0 } }, { registry, ...o });
    const clients: Client[] = [];
    try {
      const quiet = await player("quiet", 0, { aoiEvents: false });
      const deaf = await player("deaf", 0, { decodeAoi: false });
      const watching = await player("watching", 0, {});
      const walker = await player("walker", 5, {});
      clients.push(quiet, deaf, watching, walker);
      for (const c of clients) await cellReady(c);
      let events = 0;
      for (const e of ["enter", "leave", "move", "property", "detailLevel", "clientMethod"] as const) {
        quiet.on(e, () => events++);
      }
      await seen(watching, walker.player.id);
      await waitFor("the walker in the quiet client's model", () => quiet.entities.has(walker.player.id));
      const before = [quiet.stats.bytesIn, watching.stats.bytesIn, deaf.stats.bytesIn];
      for (let i = 1; i <= 5; i++) {
        walker.move({ x: 5 + i * 0.3, y: 0, z: 0 });
        walker.callCell(null, "raiseCounter");
        await new Promise((r) => setTimeout(r, 120));
      }
      await waitFor("the walker's counter at 5 for both decoding clients", () => {
        return [watching, quiet].every((c) => c.entities.get(walker.player.id)?.props.counter === 5);
      });
      const [q, w] = [quiet.stats.bytesIn - before[0], watching.stats.bytesIn - before[1]];
      assert.ok(q > 0 && Math.abs(q - w) <= 0.2 * w, `the same traffic: quiet ${q} bytes, watching ${w}`);
      assert.equal(events, 0, "no per-entity event on the quiet client");
      assert.equal(quiet.stats.undecoded, 0);
      assert.equal(deaf.world, null);
      assert.equal(deaf.entities.size, 0);
      assert.ok(
        deaf.stats.bytesIn - before[2] < w / 2,
        `the deaf client gets little: ${deaf.stats.bytesIn - before[2]}`,
      );
      assert.ok(deaf.stats.undecoded > 0, "its AOI frames are counted, not read");
    } finally {
      for (const c of clients) c.close();
    }
  },
);
