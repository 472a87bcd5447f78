/** What a restarted cellappmgr believes of the spaces cellapps claim when they register again (Spaces.adopt). */
import assert from "node:assert/strict";
import { Registry } from "../../mgr/registry.ts";
import { Spaces } from "../../mgr/spaces.ts";
import { buildBsp } from "../../core/geo/mod.ts";
import type { SpaceGeometry } from "../../core/wire/mod.ts";
import { memoryLogger } from "../../testing/log.ts";

const bounds = { minX: 0, minZ: 0, maxX: 100, maxZ: 100 };

function claim(spaceId: number, cellapps: number[], isDefault = spaceId === 1): SpaceGeometry {
  return { spaceId, bounds: [0, 0, 100, 100], tree: buildBsp(bounds, cellapps), isDefault, cellapps: [] };
}

function spaces(): Spaces {
  const log = memoryLogger();
  return new Spaces(new Registry(log), log, () => Promise.reject(new Error("no ids in this test")));
}

Deno.test("claims of one space by each of its cellapps make one space", () => {
  const s = spaces();
  const shared = claim(7, [3, 4]);
  assert.deepEqual(s.adopt(3, [claim(1, [3]), shared]), []);
  assert.deepEqual(s.adopt(4, [shared]), [], "the same space, from its other cellapp");
  assert.deepEqual([...s.all.keys()].sort(), [1, 7]);
  assert.equal(s.all.get(1)!.isDefault, true);
  assert.deepEqual(s.all.get(7)!.cellapps(), [3, 4]);
});

Deno.test("a claim that cannot stand is refused with why; the space known first stays", () => {
  const s = spaces();
  s.adopt(2, [claim(1, [2])]);
  const refused = s.adopt(5, [claim(1, [5]), claim(8, [6]), claim(9, [5], true)]);
  assert.deepEqual(refused.map((r) => r.spaceId), [1, 8, 9]);
  assert.match(refused[0].why, /claims space 1 \(default\), which this cellappmgr already runs on cellapp\(s\) 2/);
  assert.match(refused[1].why, /claims space 8, whose tree gives it no cell/);
  assert.match(refused[2].why, /claims space 9 \(default\), but the default space is space 1/);
  assert.deepEqual(s.all.get(1)!.cellapps(), [2], "the default space known first stays where it was");
  assert.deepEqual([...s.all.keys()], [1]);
});
