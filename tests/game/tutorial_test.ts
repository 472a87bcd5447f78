/**
 * docs/tutorial.md followed literally in a fresh folder outside the repository: its files are the tutorial's code
 * blocks (each names its file on its first line), its cluster is the game's own `deno task start` run as the tutorial
 * says, with a baseapp. The tutorial's client sees a rat and its gold change when it calls the base method `collect`;
 * its party script takes two players into the crypt (an instance made by createInNewSpace, listed by GET /api/spaces),
 * kills the Rat King, and once both left the instance is no longer listed.
 */
import assert from "node:assert/strict";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";
import type { SpaceSummaryView } from "../../core/views.ts";
import {
  type CodeBlock,
  freePort,
  type GameRun,
  makeArena,
  markdownBlocks,
  runInGame,
  startGameCluster,
} from "../helpers/game_folder.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const TUTORIAL = "docs/tutorial.md";

/** The game's files: the JSON block is deno.json, each TypeScript block begins with `// FILE`. */
function tutorialFiles(blocks: CodeBlock[]): Record<string, string> {
  const json = blocks.filter((b) => b.lang === "json");
  assert.equal(json.length, 1, "one JSON block: deno.json");
  const files: Record<string, string> = { "deno.json": json[0].text };
  for (const b of blocks.filter((b) => b.lang === "ts")) {
    const name = /^\/\/ ([\w.]+\.ts)\n/.exec(b.text)?.[1];
    assert.ok(name, `a TypeScript block of the tutorial names its file on its first line:\n${b.text}`);
    assert.ok(!(name in files), `${name} appears once`);
    files[name] = b.text;
  }
  const names = ["defs.ts", "rat.ts", "hero.ts", "crypt.ts", "mod.ts", "main.ts", "client.ts", "party.ts"];
  assert.deepEqual(Object.keys(files).sort(), ["deno.json", ...names].sort());
  return files;
}

/** The shell steps the tutorial has a newcomer type, checked to be the ones this test runs. */
function checkSteps(blocks: CodeBlock[]): void {
  const sh = blocks.filter((b) => b.lang === "sh").map((b) => b.text).join("\n");
  for (
    const step of [
      "mkdir crypt && cd crypt && git init",
      "ln -s ~/src/seamless seamless",
      "mkdir game && cd game",
      'export PATH="$PWD/../seamless/toolchain/node_modules/.bin:$PATH"',
      "deno task start --client-port=7300",
      "deno run -A client.ts ws://127.0.0.1:7300/",
      "deno run -A party.ts ws://127.0.0.1:7300/",
    ]
  ) {
    assert.ok(sh.includes(step), `the tutorial's steps include ${step}`);
  }
}

/** Waits for a line of `run`'s stdout matching `what`; a failure shows what the program printed. */
async function line(run: GameRun, what: RegExp, ms = 15_000): Promise<RegExpExecArray> {
  return await waitFor(`a line ${what}`, () => run.stdout.map((l) => what.exec(l)).find((m) => m), ms).catch((e) => {
    throw new Error(`${e.message}\nstdout:\n${run.stdout.join("\n")}\nstderr:\n${run.stderr.join("\n")}`);
  });
}

Deno.test("the tutorial's game runs as the tutorial says: a client, a base method, a crypt for two", opts, async () => {
  const blocks = await markdownBlocks(TUTORIAL);
  checkSteps(blocks);
  const { arena, game } = await makeArena(tutorialFiles(blocks));
  await using procs = new Procs();
  try {
    const port = freePort();
    const url = `ws://127.0.0.1:${port}/`;
    const cluster = await startGameCluster(game, port, procs);
    const admin = (await cluster.ready)!.admin!;
    const spaces = async () => ((await api(admin, "/api/spaces")).body as { spaces: SpaceSummaryView[] }).spaces;
    // The default space with its ten rats (spaceCreated), before any player.
    await waitFor("the default space and its rats", async () => {
      return (await spaces()).some((s) => s.isDefault && s.entities === 10);
    }, 10_000);

    const started = [...cluster.stderr];
    assert.deepEqual(started.filter((l) => /warn|error/i.test(l)), [], "no warning or error from starting the game");

    // The client sees rats and, having called the base method `collect`, its own gold change.
    const client = runInGame(game, ["run", "-A", "client.ts", url]);
    await line(client, /^sees Rat \d+ Rat$/, 20_000);
    await line(client, /^my gold = 1$/);
    client.child.kill("SIGTERM");
    await client.drained;

    // Two players in the crypt: an instance of its own, listed while they are inside.
    const party = runInGame(game, ["run", "-A", "party.ts", url], undefined, "piped");
    const open = await line(party, /^ann hears: the crypt is open in space (\d+)$/, 20_000);
    const crypt = Number(open[1]);
    assert.ok(crypt > 1, `the crypt's space ${crypt} is not the default one`);
    await line(party, /^both see the Rat King \d+$/);
    for (const who of ["ann", "bob"]) await line(party, new RegExp(`^${who} hears: hit: (50|0) hp left$`));
    await line(party, /^the Rat King is dead; press Enter to leave$/);
    const inside = (await spaces()).find((s) => s.id === crypt);
    assert.ok(inside && !inside.isDefault, `GET /api/spaces lists the crypt's space ${crypt} while the party is in it`);

    // Enter: both go home, and the emptied instance shuts down.
    const writer = party.child.stdin.getWriter();
    await writer.write(new TextEncoder().encode("\n"));
    await writer.close();
    await line(party, /^both are home; the crypt shuts down$/);
    assert.equal((await party.child.status).code, 0, party.stderr.join("\n"));
    await party.drained;
    // No error reply: answers to enters that cross a teleport's new view are stale, not bad input.
    assert.deepEqual(party.stderr.filter((l) => /error/i.test(l)), [], "no error reply");
    await waitFor("the crypt's space to shut down", async () => !(await spaces()).some((s) => s.id === crypt), 10_000);
    assert.ok((await spaces()).some((s) => s.isDefault), "the default space stays");

    Deno.kill((await cluster.ready)!.pid, "SIGTERM");
    assert.equal((await cluster.child.status).code, 0);
    await cluster.drained;
    // The tutorial's code type-checks as it is (deno run does not check).
    const check = runInGame(game, ["check", ...Object.keys(tutorialFiles(blocks)).filter((f) => f.endsWith(".ts"))]);
    const checked = await check.child.status;
    await check.drained;
    assert.equal(checked.code, 0, check.stderr.join("\n"));
  } finally {
    await Deno.remove(arena, { recursive: true });
  }
});
