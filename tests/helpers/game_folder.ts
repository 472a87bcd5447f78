/**
 * A game in a folder of its own, outside this repository, as README.md ("A game in its own repository") lays it
 * out: `arena/seamless` (this checkout, linked) and `arena/game`, run with the framework's pinned Deno from inside
 * the game's folder.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { parseReady, splitLines } from "../../cli/local_cluster.ts";
import type { ReadyInfo } from "../../core/process.ts";
import type { Procs } from "../../testing/procs.ts";

/** This repository's root. */
export const REPO: string = fileURLToPath(new URL("../../", import.meta.url));

/** A fenced code block of a markdown page: its language and its text. */
export interface CodeBlock {
  lang: string;
  text: string;
}

/** The code blocks of README.md's section `heading`, in order, with their language. */
export function readmeBlocks(heading: string): Promise<CodeBlock[]> {
  return markdownBlocks("README.md", heading);
}

/** The code blocks of the markdown page `page` (relative to the repository), or of its `## heading` section. */
export async function markdownBlocks(page: string, heading?: string): Promise<CodeBlock[]> {
  const text = await Deno.readTextFile(join(REPO, page));
  let section = text;
  if (heading !== undefined) {
    const start = text.indexOf(`\n## ${heading}\n`);
    assert.ok(start >= 0, `${page} has no section "${heading}"`);
    const end = text.indexOf("\n## ", start + 1);
    section = text.slice(start, end < 0 ? undefined : end);
  }
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1], text: m[2] }));
}

/** A fresh `arena/` outside the repository with `git init` run in it, this checkout at `seamless`, and `game/`. */
export async function makeArena(files: Record<string, string>): Promise<{ arena: string; game: string }> {
  const arena = await Deno.makeTempDir({ prefix: "seamless-arena-" });
  assert.ok(!arena.startsWith(REPO), `${arena} must lie outside the repository`);
  const git = await new Deno.Command("git", { args: ["init", "-q"], cwd: arena, stderr: "piped" }).output();
  assert.equal(git.code, 0, new TextDecoder().decode(git.stderr));
  // The README's "a checkout of your own": the checkout under test, with its installed toolchain.
  await Deno.symlink(REPO.replace(/\/$/, ""), join(arena, "seamless"));
  const game = join(arena, "game");
  await Deno.mkdir(game);
  for (const [path, text] of Object.entries(files)) await Deno.writeTextFile(join(game, path), text);
  return { arena, game };
}

/** The pinned Deno as the README has a game run it: `../seamless/toolchain/node_modules/.bin/deno`. */
export const GAME_DENO = "../seamless/toolchain/node_modules/.bin/deno";

/** A program run in the game's folder: its lines as they come, and the ready line when it prints one. */
export interface GameRun {
  child: Deno.ChildProcess;
  stdout: string[];
  stderr: string[];
  /** The `{"ready": ...}` line, or null when stdout closed without one. */
  ready: Promise<ReadyInfo | null>;
  /** Resolves once both streams are read to their end. */
  drained: Promise<void>;
}

/**
 * Runs `deno ARGS` in `dir` (the game's folder, or `deno` names the game's Deno from elsewhere), colour off; with
 * `stdin: "piped"` the test writes to its standard input (`child.stdin`).
 */
export function runInGame(
  dir: string,
  args: string[],
  deno: string = join(dir, GAME_DENO),
  stdin: "null" | "piped" = "null",
): GameRun {
  // As from a user's shell, which has no INIT_CWD: this test may run under `deno task test`, which sets it, and a
  // `deno task` inside keeps an INIT_CWD it inherits (as npm does) instead of naming the folder it was run from.
  const env = Deno.env.toObject();
  delete env.INIT_CWD;
  const child = new Deno.Command(deno, {
    args,
    cwd: dir,
    clearEnv: true,
    env: { ...env, NO_COLOR: "1" },
    stdin,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout: string[] = [], stderr: string[] = [];
  let onReady: (r: ReadyInfo | null) => void = () => {};
  const ready = new Promise<ReadyInfo | null>((r) => onReady = r);
  const read = async (s: ReadableStream<Uint8Array>, into: string[], scan: boolean) => {
    for await (const line of s.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines())) {
      into.push(line);
      const r = scan ? parseReady(line) : null;
      if (r) onReady(r);
    }
  };
  const drained = Promise.all([
    read(child.stdout, stdout, true).finally(() => onReady(null)),
    read(child.stderr, stderr, false),
  ]).then(() => {});
  return { child, stdout, stderr, ready, drained };
}

/** A free loopback TCP port (taken and let go). */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** Flags that keep a test's local cluster on free ports and in memory. */
export const TEST_CLUSTER_FLAGS: readonly string[] = ["--port=0", "--admin-port=0", "--kv=:memory:"];

/** Starts the game's cluster (`deno task start`) with its baseapp's clients on `clientPort`; its pids go to `procs`. */
export async function startGameCluster(game: string, clientPort: number, procs: Procs): Promise<GameRun> {
  const run = runInGame(game, ["task", "start", `--client-port=${clientPort}`, ...TEST_CLUSTER_FLAGS]);
  const ready = await run.ready;
  assert.ok(ready, `the game's cluster did not start:\n${run.stderr.join("\n")}`);
  procs.adopt(ready.pid);
  for (const c of (ready.children ?? []) as { pid: number }[]) procs.adopt(c.pid);
  return run;
}
