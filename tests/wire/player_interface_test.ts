/** The checks of the admin player messages: every field of a baseapp's answer, and the requests' arguments. */
import assert from "node:assert/strict";
import { checkPlayerList, MAX_PLAYERS_PER_ANSWER, PlayerMsg } from "../../core/wire/mod.ts";

const ann = {
  account: "ann",
  entityId: 7,
  type: "Avatar",
  spaceId: 1,
  position: [1, 0, -2],
  connected: false,
  graceMsLeft: 2500,
};

Deno.test("a player list passes with every field right and is refused naming the field that is not", () => {
  const check = checkPlayerList(2);
  assert.equal(
    check({ players: [ann, { ...ann, account: "bob", connected: true, graceMsLeft: null }], total: 5 }),
    null,
  );
  const cases: [unknown, RegExp][] = [
    [{ players: [ann, ann, ann], total: 3 }, /players.*at most 2/],
    [{ players: [{ ...ann, extra: 1 }], total: 1 }, /unexpected field "extra"/],
    [{ players: [{ ...ann, account: "a".repeat(65) }], total: 1 }, /account/],
    [{ players: [{ ...ann, entityId: 0 }], total: 1 }, /entityId/],
    [{ players: [{ ...ann, spaceId: -1 }], total: 1 }, /spaceId/],
    [{ players: [{ ...ann, position: [1, 2] }], total: 1 }, /position/],
    [{ players: [{ ...ann, position: [NaN, 0, 0] }], total: 1 }, /position/],
    [{ players: [{ ...ann, connected: "yes" }], total: 1 }, /connected/],
    [{ players: [{ ...ann, graceMsLeft: -5 }], total: 1 }, /graceMsLeft/],
    [{ players: [{ ...ann, type: 3 }], total: 1 }, /type/],
    [{ players: [], total: -1 }, /total/],
    [{ players: [] }, /total/],
    [[ann], /expected an object/],
  ];
  for (const [v, re] of cases) assert.match(check(v) ?? "passed", re, JSON.stringify(v));
});

Deno.test("listPlayers and kickPlayer check their arguments and come from the cellappmgr only", () => {
  assert.equal(PlayerMsg.listPlayers.check([10]), null);
  assert.notEqual(PlayerMsg.listPlayers.check([0]), null);
  assert.notEqual(PlayerMsg.listPlayers.check([MAX_PLAYERS_PER_ANSWER + 1]), null);
  assert.notEqual(PlayerMsg.listPlayers.check(["10"]), null);
  assert.equal(PlayerMsg.kickPlayer.check(["ann", "spamming"]), null);
  assert.notEqual(PlayerMsg.kickPlayer.check(["a".repeat(65), "x"]), null);
  assert.notEqual(PlayerMsg.kickPlayer.check(["ann", "x".repeat(201)]), null);
  assert.notEqual(PlayerMsg.kickPlayer.check(["ann"]), null);
  assert.deepEqual([PlayerMsg.listPlayers.from, PlayerMsg.kickPlayer.from], [["cellappmgr"], ["cellappmgr"]]);
});
