/**
 * Instance spaces shutting down once empty (Spaces.report, docs/architecture.md "Spaces and cells"): only when every
 * cell's report says no reals, twice in a row from each cellapp; never the other spaces; and a cellappmgr that
 * adopts an instance from its cellapps keeps knowing it is one.
 */
import assert from "node:assert/strict";
import { Registry } from "../../mgr/registry.ts";
import { Spaces } from "../../mgr/spaces.ts";
import { buildBsp } from "../../core/geo/bsp.ts";
import type { CellReport, SpaceGeometry } from "../../core/wire/mod.ts";
import { memoryLogger } from "../../testing/log.ts";

const bounds = { minX: 0, minZ: 0, maxX: 100, maxZ: 100 };

function claim(spaceId: number, cellapps: number[], shutDownWhenEmpty: boolean): SpaceGeometry {
  const g: SpaceGeometry = {
    spaceId,
    bounds: [0, 0, 100, 100],
    tree: buildBsp(bounds, cellapps),
    isDefault: false,
    cellapps: [],
  };
  if (shutDownWhenEmpty) g.shutDownWhenEmpty = true;
  return g;
}

function report(spaceId: number, cellId: number, reals: number): CellReport {
  return {
    spaceId,
    cellId,
    reals,
    ghosts: 0,
    tickRate: 10,
    tickMsP50: 0,
    tickMsP99: 0,
    load: 0,
    offloadsIn: 0,
    offloadsOut: 0,
    hadEntities: true,
  };
}

Deno.test("an instance of two cells shuts down once each cellapp reported it empty twice; other spaces stay", () => {
  const log = memoryLogger();
  const s = new Spaces(new Registry(log), log, () => Promise.reject(new Error("no ids in this test")));
  s.adopt(3, [claim(7, [3, 4], true), claim(8, [3, 4], false)]);
  s.adopt(4, [claim(7, [3, 4], true), claim(8, [3, 4], false)]);
  assert.equal(s.all.get(7)!.shutDownWhenEmpty, true, "adopted as an instance");
  assert.equal(s.all.get(8)!.shutDownWhenEmpty, false);
  // Each cellapp reports its own cell of each space: cellapp 3 the first, cellapp 4 the second.
  const [c1, c2] = s.all.get(7)!.cells().map((c) => c.id);
  const from = (cellapp: number, reals: number) => {
    const cell = cellapp === 3 ? c1 : c2;
    s.report(cellapp, [report(7, cell, reals), report(8, cell, 0)]);
  };

  from(3, 0);
  from(4, 1);
  from(3, 0);
  from(4, 0); // its last entity left; cellapp 3's last report may predate an entity's arrival there
  from(3, 1); // one is there after all: the count starts again
  from(4, 0);
  from(3, 0);
  from(4, 0);
  assert.ok(s.all.has(7), "one report from each since it emptied");
  from(3, 0);
  assert.ok(s.all.has(7), "cellapp 4 has reported only once since");
  from(4, 0);
  assert.equal(s.all.has(7), false, "shut down");
  assert.match(log.lines.join("\n"), /space 7 shutting down: the space is empty/);
  assert.ok(s.all.has(8), "a space made otherwise stays");
});
