/**
 * The Colyseus peer of `deno task bench peer`: copies the peer harness (beside the repository, when there)
 * into a temporary folder, installs it there with npm (never tuned down), runs
 * its run.mjs with the scene's parameters and returns its one JSON line.
 */
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Where the peer harness lives when it is there: `../shared/peers/colyseus` beside the repository. */
export function peerFolder(): string | null {
  for (const dir of [`${ROOT}../shared/peers/colyseus`, `${ROOT}../../shared/peers/colyseus`]) {
    try {
      if (Deno.statSync(`${dir}/run.mjs`).isFile) return Deno.realPathSync(dir);
    } catch {
      // not here
    }
  }
  return null;
}

/** The figures of run.mjs's JSON line this benchmark uses (README of the peer). */
export interface PeerResult {
  version: string;
  connected: number;
  serverCpuPct: number | null;
  serverCpuSecPerClientPerSec: number | null;
  serverRssMB: number | null;
  bytesPerClientPerSec: number | null;
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
  errors: number;
  botCpuPct: number | null;
  avgVisiblePlayers: number | null;
  movesSentPerClientPerSec: number | null;
}

/** Runs `cmd` with a time limit, killing it by pid when the limit passes; returns its exit code and stdout. */
async function runBounded(
  cmd: string,
  args: string[],
  cwd: string,
  limitMs: number,
): Promise<{ code: number; stdout: string }> {
  const child = new Deno.Command(cmd, { args, cwd, stdin: "null", stdout: "piped", stderr: "piped" }).spawn();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      child.kill("SIGKILL");
    } catch {
      // already exited
    }
  }, limitMs);
  const [out, err, status] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.status,
  ]);
  clearTimeout(timer);
  if (timedOut) throw new Error(`${cmd} ${args.join(" ")} did not finish in ${limitMs / 1000} s; killed`);
  if (!status.success) {
    throw new Error(`${cmd} ${args.join(" ")} exited ${status.code}:\n${err.split("\n").slice(-15).join("\n")}`);
  }
  return { code: status.code, stdout: out };
}

/** An installed copy of the peer in a temporary folder. */
export interface InstalledPeer {
  dir: string;
  /** Removes the temporary folder. */
  remove(): Promise<void>;
}

/** Copies the peer's files (not its logs or modules) into a temporary folder and runs `npm install` there. */
export async function installPeer(from: string, log: (line: string) => void): Promise<InstalledPeer> {
  const dir = await Deno.makeTempDir({ prefix: "bench-peer-colyseus-" });
  const remove = () => Deno.remove(dir, { recursive: true }).catch(() => {});
  try {
    for (const e of Deno.readDirSync(from)) if (e.isFile) await Deno.copyFile(`${from}/${e.name}`, `${dir}/${e.name}`);
    log(`installing the Colyseus peer with npm in ${dir}`);
    await runBounded("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], dir, 300_000);
    return { dir, remove };
  } catch (e) {
    await remove();
    throw e;
  }
}

/** Runs the peer's run.mjs (variant aoi) with the scene's parameters; its own runner bounds it, and so does this. */
export async function runPeer(
  peer: InstalledPeer,
  scene: { clients: number; seconds: number; side: number; warmup: number; observers: number },
): Promise<PeerResult> {
  const args = [
    "run.mjs",
    "--clients",
    String(scene.clients),
    "--seconds",
    String(scene.seconds),
    "--variant",
    "aoi",
    "--side",
    String(scene.side),
    "--warmup",
    String(scene.warmup),
    "--observers",
    String(scene.observers),
  ];
  // run.mjs kills its children after 90 + warm-up + D + 60 s; this is a last resort beyond that.
  const limit = (90 + scene.warmup + scene.seconds + 90) * 1000;
  const { stdout } = await runBounded("node", args, peer.dir, limit);
  const line = stdout.trim().split("\n").filter((l) => l.startsWith("{")).pop();
  if (!line) throw new Error(`the peer's run.mjs printed no JSON line: ${stdout.slice(-500)}`);
  return JSON.parse(line) as PeerResult;
}
