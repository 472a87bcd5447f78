import assert from "node:assert/strict";
import { costGrowth, serverMsPerClientSec } from "../../bench/capacity.ts";

Deno.test("the servers' cost per client sums the cellapp and every baseapp, not the cellappmgr", () => {
  const ms = serverMsPerClientSec({ cellapp: 0.2, "baseapp 1": 0.15, "baseapp 2": 0.15, cellappmgr: 0.5 }, 500);
  assert.equal(ms?.toFixed(3), "1.000");
  assert.equal(serverMsPerClientSec({ cellapp: 0.2 }, 0), null);
});

Deno.test("cost growth: a flat curve passes, a planted step that costs 20 % more per client is caught", () => {
  const flat = [
    { clients: 250, msPerClientSec: 1.0 },
    { clients: 500, msPerClientSec: 0.98 },
    { clients: 1000, msPerClientSec: 1.05 },
    { clients: 1250, msPerClientSec: 1.04 },
  ];
  assert.ok(Math.abs(costGrowth(flat)! - 0.05) < 1e-9);
  const planted = flat.map((s) => s.clients === 1000 ? { ...s, msPerClientSec: 1.2 } : s);
  assert.ok(costGrowth(planted)! > 0.1);
  assert.equal(costGrowth([{ clients: 250, msPerClientSec: 1 }]), null);
  assert.equal(costGrowth([{ clients: 250, msPerClientSec: null }, { clients: 500, msPerClientSec: 1 }]), null);
});
