/**
 * Confirmed means durable (README, Fault tolerance): a raise of a player's counter that its client saw is never undone
 * when the player's cellapp dies (SIGKILL) or stalls past the dead timeout (SIGSTOP) and its cell entity is restored
 * from an older backup; raises sent into the dying cellapp are carried out once after the restore, or answered with
 * an error. A client that sends a call and goes at once leaves one base and one real, its call run at most once.
 * Real processes: a cellappmgr, two cellapps, a baseapp; SDK clients.
 */
import assert from "node:assert/strict";
import { type Client, connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import { ErrorCode } from "../../core/proto/mod.ts";
import type { ClusterView, PlayersView } from "../../core/views.ts";
import { api, type Proc, Procs } from "../../testing/procs.ts";
import {
  cellEntitiesOf,
  cellReady,
  entityAt,
  type LocalCluster,
  seen,
  startBaseProcess,
  startCluster,
} from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

/** A cluster of two cellapps and a baseapp, and a space with a cell on each cellapp. */
async function scene(procs: Procs): Promise<{ cluster: LocalCluster; base: Proc; url: string; spaceId: number }> {
  const cluster = await startCluster(procs, { cellapps: 2 });
  // At debug level: the tests wait for the line that says a cell entity's first backup was kept.
  const { proc: base, clientUrl: url } = await startBaseProcess(procs, cluster, ["--log-level=debug"]);
  const res = await api(cluster.admin, "/api/spaces", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ bounds: [-200, -200, 200, 200], cells: 2 }),
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return { cluster, base, url, spaceId: (res.body as { id: number }).id };
}

/** A player's client, and every counter value it was sent, in order. */
interface Player {
  c: Client;
  values: number[];
  errors: { code: number; message: string }[];
}

async function player(url: string, name: string, spaceId: number): Promise<Player> {
  const c = await connect(url, { name, password: "pw", spaceId, position: { x: -150, y: 0, z: -150 } }, { registry });
  const p: Player = { c, values: [], errors: [] };
  c.on("playerProperty", (prop) => {
    if (prop === "counter") p.values.push(c.player.props.counter as number);
  });
  c.on("error", (code, message) => p.errors.push({ code, message }));
  assert.equal(await cellReady(c), spaceId);
  return p;
}

/** The cellapp process holding the real of entity `id`. */
async function cellappOf(cluster: LocalCluster, id: number): Promise<Proc> {
  const at = await waitFor(`entity ${id} on a cellapp`, () => entityAt(cluster.admin, id));
  const { processes } = (await api(cluster.admin, "/api/cluster")).body as ClusterView;
  const pid = processes.find((p) => p.role === "cellapp" && p.id === at.cellapp)!.pid;
  return cluster.cellapps.find((p) => p.pid === pid)!;
}

/**
 * Until the baseapp kept a first backup of the cell entity of `id`: these tests restore from a backup. Before it, the
 * death of its cellapp has the base make the entity anew (docs/faults.md, "Cell entities"; tests/base/cell_backup_test.ts).
 */
async function backedUp(base: Proc, id: number): Promise<void> {
  await waitFor(
    `the baseapp to keep a first backup of the cell entity of ${id}`,
    () => base.stderr.some((l) => l.includes(`Avatar ${id}]`) && l.includes("first backup of the cell entity kept")),
    5_000,
  );
}

/** Raises the counter `n` times and waits until the client sees `want`. */
async function raise(p: Player, n: number, want: number): Promise<void> {
  for (let i = 0; i < n; i++) p.c.callCell(null, "raiseCounter");
  await waitFor(`the client to see counter ${want}`, () => p.c.player.props.counter === want, 10_000);
}

/** Until the baseapp has read every call `p` sent so far: the echo of a `say` sent after them comes back. */
async function read(p: Player, mark: string): Promise<void> {
  let echoed = false;
  p.c.on("playerMethod", (name, args) => {
    if (name === "onChat" && args[1] === `echo: ${mark}`) echoed = true;
  });
  p.c.callBase("say", mark);
  await waitFor(`the echo of ${mark}`, () => echoed, 5000);
}

/** Until the cellappmgr no longer lists the process `proc`. */
async function declaredDead(cluster: LocalCluster, proc: Proc): Promise<void> {
  await waitFor("the cellappmgr to declare the cellapp dead", async () => {
    const { processes } = (await api(cluster.admin, "/api/cluster")).body as ClusterView;
    return !processes.some((p) => p.pid === proc.pid);
  }, 10_000);
}

/** Until the baseapp logged that it replayed calls into the restored cell entity of `id`; returns that line. */
async function replayed(base: Proc, id: number): Promise<string> {
  return await waitFor(
    "the baseapp to replay the calls into the restored cell entity",
    () => base.stderr.find((l) => l.includes(`Avatar ${id}]`) && l.includes("replayed into the restored cell entity")),
    15_000,
  ).catch((e) => {
    // What the baseapp said of the entity instead, to tell a slow restore from a lost one or calls held back.
    const said = base.stderr.filter((l) => l.includes(`${id}`)).slice(-10).join("\n");
    throw new Error(`${(e as Error).message}; the baseapp's last lines about entity ${id}:\n${said}`, { cause: e });
  });
}

/**
 * After the restore the counter is `want`: every raise the client saw, and each sent into the dying cellapp once
 * (none was answered with an error); one more raise shows `want + 1`, not more (nothing ran twice). No value the
 * client was sent after it saw `confirmed` was lower than that.
 */
async function settled(p: Player, confirmed: number, want: number): Promise<void> {
  await waitFor(`counter ${want} after the restore`, () => p.c.player.props.counter === want, 15_000);
  await raise(p, 1, want + 1);
  const from = p.values.indexOf(confirmed);
  assert.ok(from >= 0, `the client saw ${confirmed}`);
  const lower = p.values.slice(from).filter((v) => v < confirmed);
  assert.deepEqual(lower, [], `counter values below the confirmed ${confirmed} sent after it: ${p.values}`);
  assert.deepEqual(p.errors.filter((e) => e.code === ErrorCode.callLost), [], "no call was lost");
}

Deno.test(
  "raises seen before a SIGKILL of their cellapp survive its restore; raises sent into it run once",
  opts,
  async () => {
    await using procs = new Procs();
    const { cluster, base, url, spaceId } = await scene(procs);
    const p = await player(url, "kay", spaceId);
    const id = p.c.player.id;
    const doomed = await cellappOf(cluster, id);
    await backedUp(base, id);

    await raise(p, 3, 3);
    // Right after the client saw 3: its latest backup is likely older. The cellapp hangs, two raises go into it unread,
    // then it dies.
    doomed.kill("SIGSTOP");
    try {
      p.c.callCell(null, "raiseCounter");
      p.c.callCell(null, "raiseCounter");
      await read(p, "two raises sent");
    } finally {
      doomed.kill("SIGKILL");
    }

    const line = await replayed(base, id);
    assert.match(line, /\d+ client calls sent since the backup replayed/);
    await settled(p, 3, 5);
    const reals = (await cellEntitiesOf(cluster.admin, id)).filter((e) => e.real);
    assert.equal(reals.length, 1, "one real");
    p.c.close();
  },
);

Deno.test(
  "raises seen before their cellapp is stopped past the dead timeout survive its restore and its waking",
  opts,
  async () => {
    await using procs = new Procs();
    const { cluster, base, url, spaceId } = await scene(procs);
    const p = await player(url, "sal", spaceId);
    const id = p.c.player.id;
    const stalled = await cellappOf(cluster, id);
    await backedUp(base, id);

    await raise(p, 2, 2);
    stalled.kill("SIGSTOP");
    try {
      p.c.callCell(null, "raiseCounter");
      p.c.callCell(null, "raiseCounter");
      await read(p, "two raises sent");
      await declaredDead(cluster, stalled);
      await replayed(base, id);
    } finally {
      stalled.kill("SIGCONT");
    }
    await settled(p, 2, 4);
    // The woken cellapp is fenced: it comes back empty under a new id, and what it still held takes no effect.
    await waitFor("the woken cellapp registered again", async () => {
      const { processes } = (await api(cluster.admin, "/api/cluster")).body as ClusterView;
      return processes.some((x) => x.pid === stalled.pid);
    }, 15_000);
    await raise(p, 1, 6);
    const reals = (await cellEntitiesOf(cluster.admin, id)).filter((e) => e.real);
    assert.equal(reals.length, 1, "one real");
    p.c.close();
  },
);

Deno.test(
  "a client that sends a call into a dying cellapp and closes at once leaves one base and one real, its call run once",
  opts,
  async () => {
    await using procs = new Procs();
    const { cluster, base, url, spaceId } = await scene(procs);
    const p = await player(url, "ned", spaceId);
    const id = p.c.player.id;
    const doomed = await cellappOf(cluster, id);
    await backedUp(base, id);
    await raise(p, 1, 1);

    doomed.kill("SIGSTOP");
    try {
      p.c.callCell(null, "raiseCounter");
      p.c.close();
      await waitFor("the baseapp to see the client go", async () => {
        const { players } = (await api(cluster.admin, "/api/players")).body as PlayersView;
        return players.some((x) => x.entityId === id && !x.connected);
      }, 10_000);
    } finally {
      doomed.kill("SIGKILL");
    }
    await replayed(base, id);

    // Back within the grace period: the same base, its counter raised once by the call it sent before it went.
    const again = await player(url, "ned", spaceId);
    assert.equal(again.c.player.id, id);
    await waitFor("counter 2", () => again.c.player.props.counter === 2, 10_000);
    await raise(again, 1, 3);
    const { players } = (await api(cluster.admin, "/api/players")).body as PlayersView;
    assert.equal(players.filter((x) => x.account === "ned").length, 1, "one base");
    const reals = (await cellEntitiesOf(cluster.admin, id)).filter((e) => e.real);
    assert.equal(reals.length, 1, "one real");
    again.c.close();
  },
);

Deno.test(
  "raises sent every 50 ms across a SIGKILL of their cellapp are each carried out once or answered with an error",
  opts,
  async () => {
    await using procs = new Procs();
    const { cluster, base, url, spaceId } = await scene(procs);
    const p = await player(url, "ray", spaceId);
    const id = p.c.player.id;
    const doomed = await cellappOf(cluster, id);
    await backedUp(base, id);
    await raise(p, 1, 1);
    let sent = 1;
    const timer = setInterval(() => {
      p.c.callCell(null, "raiseCounter");
      sent++;
    }, 50);
    try {
      await new Promise((r) => setTimeout(r, 500));
      doomed.kill("SIGKILL");
      await waitFor(
        "the cell entity restored",
        () =>
          base.stderr.some((l) => l.includes(`Avatar ${id}]`) && l.includes("cell entity restored from its backup")),
        15_000,
      );
      // Raising on for a while after the restore too.
      await new Promise((r) => setTimeout(r, 500));
    } finally {
      clearInterval(timer);
    }
    await read(p, "every raise sent");
    const answered = () => p.errors.filter((e) => e.code === ErrorCode.noCell || e.code === ErrorCode.callLost).length;
    await waitFor(
      "every raise carried out or answered",
      () => p.c.player.props.counter === sent - answered(),
      10_000,
    ).catch((e) => {
      throw new Error(
        `${(e as Error).message}: sent ${sent}, answered ${answered()}, counter ${p.c.player.props.counter}; ` +
          `errors ${JSON.stringify(p.errors.slice(0, 3))}`,
      );
    });
    await raise(p, 1, sent - answered() + 1);
    p.c.close();
  },
);

Deno.test(
  "a call of another entity sent into a dying cellapp is answered with callLost; the player's own raise runs once",
  opts,
  async () => {
    await using procs = new Procs();
    const { cluster, base, url, spaceId } = await scene(procs);
    const p = await player(url, "uma", spaceId);
    const q = await player(url, "vic", spaceId);
    const id = p.c.player.id;
    await seen(p.c, q.c.player.id);
    const doomed = await cellappOf(cluster, id);
    await backedUp(base, id);
    doomed.kill("SIGSTOP");
    try {
      p.c.callCell(q.c.player.id, "raiseCounter");
      p.c.callCell(null, "raiseCounter");
      await read(p, "two calls sent");
    } finally {
      doomed.kill("SIGKILL");
    }
    const line = await replayed(base, id);
    assert.match(
      line,
      /1 client calls sent since the backup replayed .*; 1 calls of other entities answered with callLost/,
    );
    await waitFor(
      "callLost for the call of the other entity",
      () => p.errors.some((e) => e.code === ErrorCode.callLost),
    );
    assert.match(p.errors.find((e) => e.code === ErrorCode.callLost)!.message, new RegExp(`entity ${q.c.player.id} `));
    await waitFor("the own raise carried out", () => p.c.player.props.counter === 1, 10_000);
    await raise(p, 1, 2);
    p.c.close();
    q.c.close();
  },
);
