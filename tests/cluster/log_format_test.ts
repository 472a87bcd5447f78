/**
 * --log-format=json with real processes: every line each role writes is one JSON object with time, level, role,
 * pid and (once registered) its process id; the lines about an entity or a space name them.
 */
import assert from "node:assert/strict";
import { connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import { LOG_LEVELS } from "../../core/log.ts";
import { type Proc, Procs } from "../../testing/procs.ts";
import { cellReady, startBaseProcess, startCluster } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const JSON_LOGS = ["--log-format=json"];

type Line = {
  time: string;
  level: string;
  role: string;
  pid: number;
  process?: number;
  tag?: string;
  msg: string;
  entity?: number;
  space?: number;
};

/** Every line `p` wrote, each parsed as JSON and checked for the fields every line has. */
function linesOf(p: Proc, role: string): Line[] {
  return p.stderr.filter((l) => l.trim() !== "").map((l) => {
    let v: Line;
    try {
      v = JSON.parse(l);
    } catch {
      throw new Error(`${role} wrote a line that is not JSON: ${l}`);
    }
    assert.ok(v && typeof v === "object" && !Array.isArray(v), l);
    assert.ok(!Number.isNaN(Date.parse(v.time)) && v.time.endsWith("Z"), `time in ${l}`);
    assert.ok((LOG_LEVELS as readonly string[]).includes(v.level), `level in ${l}`);
    assert.equal(v.role, role, l);
    assert.equal(v.pid, p.pid, l);
    assert.equal(typeof v.msg, "string", l);
    return v;
  });
}

Deno.test(
  "--log-format=json: one JSON object per line, with the entity and space where a line names them",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs, { mgrFlags: JSON_LOGS, cellFlags: JSON_LOGS });
    const base = await startBaseProcess(procs, cluster, JSON_LOGS);
    const dan = await connect(base.clientUrl, { name: "dan", password: "pw" }, { registry });
    await cellReady(dan);
    const id = dan.player.id;
    await dan.logout();

    const logout = await waitFor(
      "the logout line",
      () => linesOf(base.proc, "baseapp").find((l) => /logged out/.test(l.msg)),
    );
    assert.equal(logout.entity, id);
    assert.equal(logout.space, 1);
    assert.equal(typeof logout.process, "number", "a registered baseapp names its process id");
    const login = linesOf(base.proc, "baseapp").find((l) => l.msg.startsWith(`dan logged in as Avatar ${id}`));
    assert.ok(login, "the login line");
    assert.deepEqual([login.entity, login.space], [id, 1]);

    const mgr = linesOf(cluster.mgr, "cellappmgr");
    const space = mgr.find((l) => l.msg.startsWith("space 1 created"));
    assert.ok(space, `the space's line among ${mgr.map((l) => l.msg).join(" | ")}`);
    assert.deepEqual([space.space, space.process], [1, 0]);

    const cell = linesOf(cluster.cellapps[0], "cellapp").find((l) => l.msg.startsWith("cell 1 of space 1 created"));
    assert.ok(cell, "the cell's line");
    assert.equal(cell.space, 1);
    assert.equal(typeof cell.process, "number");
  },
);
