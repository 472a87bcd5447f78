/** What the cellappmgr says is lost for good when a cellapp dies (mgr/losses.ts), in each order of a double failure. */
import assert from "node:assert/strict";
import { Losses, LOST_WITH_MS, unbackedOf } from "../../mgr/losses.ts";
import type { CellReport } from "../../core/wire/mod.ts";
import { memoryLogger } from "../../testing/log.ts";

function report(spaceId: number, cellId: number, unbacked: [string, number][]): CellReport {
  return {
    spaceId,
    cellId,
    reals: unbacked.reduce((n, [, c]) => n + c, 0),
    ghosts: 0,
    tickRate: 10,
    tickMsP50: 1,
    tickMsP99: 1,
    load: 0,
    offloadsIn: 0,
    offloadsOut: 0,
    hadEntities: true,
    unbacked,
  };
}

const held = unbackedOf([
  report(2, 1, [["NPC", 10], ["Guard", 2]]),
  report(2, 3, [["NPC", 5]]),
  report(3, 1, [["NPC", 4]]),
  report(4, 1, []),
]);
const alive = (id: number, toldMsAgo = 60_000) => ({ id, alive: true, toldMsAgo });

Deno.test("unbackedOf sums each space's reals without a base by type, leaving out empty spaces", () => {
  assert.deepEqual([...held].map(([s, t]) => [s, [...t]]), [[2, [["NPC", 15], ["Guard", 2]]], [3, [["NPC", 4]]]]);
});

Deno.test("a cellapp whose buddy dies with it: logged once per space when the buddy goes, with counts and why", () => {
  const log = memoryLogger();
  const losses = new Losses(log);
  losses.cellAppDied(1, alive(2), held, 1000);
  assert.deepEqual(log.lines, [], "its buddy may still restore them");
  losses.cellAppDied(2, alive(3), new Map(), 1000 + LOST_WITH_MS / 2);
  assert.deepEqual(log.lines, [
    "error test space 2 lost 17 entities for good with cellapp 1 (2 Guard, 15 NPC): their only backups were on its " +
    "buddy, cellapp 2, which died with it",
    "error test space 3 lost 4 entities for good with cellapp 1 (4 NPC): their only backups were on its buddy, " +
    "cellapp 2, which died with it",
  ]);
  losses.cellAppDied(3, alive(1), new Map(), 1000 + LOST_WITH_MS / 2);
  assert.equal(log.lines.length, 2, "said once");
});

Deno.test("a buddy that dies later than LOST_WITH_MS had restored them: nothing is said lost", () => {
  const log = memoryLogger();
  const losses = new Losses(log);
  losses.cellAppDied(1, alive(2), held, 1000);
  losses.cellAppDied(2, alive(3), new Map(), 1000 + LOST_WITH_MS + 1);
  assert.deepEqual(log.lines, []);
});

Deno.test("a buddy gone first, one given just now, or none: the loss is logged at once with its reason", () => {
  for (
    const [buddy, why] of [
      [{ id: 2, alive: false, toldMsAgo: 60_000 }, /on its buddy, cellapp 2, gone before it$/],
      [alive(3, 200), /its buddy cellapp 3 was given it only 200 ms before .* held no backups of them yet$/],
      [
        { ...alive(3, 5), previous: 2 },
        /its buddy cellapp 3 was given it only 5 ms before \(its previous buddy, cellapp 2, had died\)/,
      ],
      [null, /it had no buddy cellapp to back them up$/],
    ] as const
  ) {
    const log = memoryLogger();
    new Losses(log).cellAppDied(1, buddy, held, 1000);
    assert.equal(log.lines.length, 2, log.lines.join("\n"));
    for (const l of log.lines) assert.match(l, why);
  }
});
