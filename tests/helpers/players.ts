/**
 * Real local clusters for player tests: a cellappmgr and cellapps as main.ts
 * processes (through Procs, killed by pid), a baseapp either as a process or
 * in this process (BaseApp.start against the real cellappmgr), and small
 * helpers to look at what the admin API and SDK clients see.
 */
import { type Config, parseCommand } from "../../core/config/mod.ts";
import type { CellEntityView, ClusterView, EntityView } from "../../core/views.ts";
import type { Client, EntityView as ClientEntityView } from "../../client/mod.ts";
import { api, type Proc, type Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

/** A cellappmgr with its cellapps, up and with the default space. */
export interface LocalCluster {
  mgr: Proc;
  /** Admin API base URL, as the test reaches it (a forward when the cellappmgr runs on a test host). */
  admin: string;
  /** What every admin request adds (the bearer token, when the cellappmgr has `--admin-token`). */
  adminInit: RequestInit;
  /** Where processes reach the cellappmgr (HOST:PORT). */
  mgrAddress: string;
  cellapps: Proc[];
}

/** Where a process runs: a command prefix (a test host's `ip netns exec NS`, hosts.ts) and flags (its `--host`). */
export interface ProcPlace {
  wrap?: string[];
  flags?: string[];
}

/** How startCluster places and reaches the processes; every field has a loopback default. */
export interface ClusterOptions {
  cellapps?: number;
  mgrFlags?: string[];
  cellFlags?: string[];
  /** Where the cellappmgr runs. */
  mgrAt?: ProcPlace;
  /** Where cellapp `i` (from 0) runs. */
  cellAt?: (i: number) => ProcPlace;
  /** The URL the test reaches the admin API by, from the one the cellappmgr announced (e.g. a forward). */
  reachAdmin?: (announced: string) => Promise<string>;
  /** The cellappmgr's `--admin-token`, sent with the helpers' admin requests. */
  adminToken?: string;
  /** Where the other processes reach the cellappmgr (default: the address it announced). */
  mgrAddress?: string;
}

/** Starts a cellappmgr and `cellapps` cellapps (default 1) and waits for the default space. */
export async function startCluster(procs: Procs, opts: ClusterOptions = {}): Promise<LocalCluster> {
  const at = opts.mgrAt ?? {};
  const mgr = await procs.start(
    ["--role=mgr", "--port=0", "--admin-port=0", ...(opts.mgrFlags ?? []), ...(at.flags ?? [])],
    { wrap: at.wrap },
  );
  const admin = opts.reachAdmin ? await opts.reachAdmin(mgr.ready.admin!) : mgr.ready.admin!;
  const adminInit: RequestInit = opts.adminToken ? { headers: { authorization: `Bearer ${opts.adminToken}` } } : {};
  const mgrAddress = opts.mgrAddress ?? mgr.ready.address!;
  const cellapps = await Promise.all(
    Array.from({ length: opts.cellapps ?? 1 }, (_, i) => {
      const c = opts.cellAt?.(i) ?? {};
      return procs.start(
        ["--role=cell", "--port=0", `--mgr=${mgrAddress}`, ...(opts.cellFlags ?? []), ...(c.flags ?? [])],
        { wrap: c.wrap },
      );
    }),
  );
  await waitFor(
    "the default space",
    async () => (await api(admin, "/api/spaces/1", adminInit)).status === 200,
    30_000,
  );
  // A space made next is spread over the cellapps registered then: every one must be (a slow one may lag).
  await waitFor(`${cellapps.length} cellapps registered`, async () => {
    const { processes } = (await api(admin, "/api/cluster", adminInit)).body as ClusterView;
    return processes.filter((p) => p.role === "cellapp").length >= cellapps.length;
  }, 30_000);
  return { mgr, admin, adminInit, mgrAddress, cellapps };
}

/**
 * Starts a baseapp process (`flags` added, e.g. `--max-speed=1000`) and waits until the cellappmgr lists it. Tests
 * put their players where they need them: the baseapp runs with `--client-spawn` unless `serverPlaced`.
 */
export async function startBaseProcess(
  procs: Procs,
  cluster: LocalCluster,
  flags: string[] = [],
  env: Record<string, string> = {},
  serverPlaced = false,
  at: ProcPlace = {},
): Promise<{ proc: Proc; clientUrl: string }> {
  const proc = await procs.start(
    [
      "--role=base",
      "--port=0",
      "--client-port=0",
      `--mgr=${cluster.mgrAddress}`,
      ...(serverPlaced ? [] : ["--client-spawn"]),
      ...flags,
      ...(at.flags ?? []),
    ],
    { env, wrap: at.wrap },
  );
  const clientUrl = proc.ready.clientUrl as string;
  await waitFor("the baseapp registered with its clientUrl", async () => {
    const c = (await api(cluster.admin, "/api/cluster", cluster.adminInit)).body as ClusterView;
    // One bound to every interface is listed under the address the cellappmgr saw it connect from.
    return c.processes.some((p) => p.role === "baseapp" && p.pid === proc.pid && p.clientUrl);
  }, 30_000);
  return { proc, clientUrl };
}

/**
 * A baseapp Config for BaseApp.start in this process, joining the cellappmgr at `mgrAddress`: what main.ts would
 * read from `--role=base --mgr=… --port=0 --client-port=0 --kv=:memory: --log-level=warn`, then `over`.
 */
export function baseConfig(mgrAddress: string, over: Partial<Config> = {}): Config {
  const parsed = parseCommand(
    ["--role=base", `--mgr=${mgrAddress}`, "--port=0", "--client-port=0", "--kv=:memory:", "--log-level=warn"],
    {},
  );
  if (parsed.help) throw new Error("unreachable: no --help given");
  return { ...parsed.config, ...over };
}

/** The admin API's view of an entity, or null when no cellapp holds it. */
export async function entityAt(admin: string, id: number, init: RequestInit = {}): Promise<EntityView | null> {
  const r = await api(admin, `/api/entities/${id}`, init);
  if (r.status === 404) return null;
  if (r.status !== 200) throw new Error(`GET /api/entities/${id}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as EntityView;
}

/** Waits until the admin API shows entity `id` at x (and z when given). */
export async function waitForPosition(admin: string, id: number, x: number, z?: number): Promise<EntityView> {
  return await waitFor(`entity ${id} at x=${x}${z === undefined ? "" : `, z=${z}`} on its cell`, async () => {
    const e = await entityAt(admin, id);
    return e && e.position[0] === x && (z === undefined || e.position[2] === z) ? e : null;
  });
}

/** Waits until client `c` has its cell entity (cellReady) and returns its space. */
export async function cellReady(c: Client, ms = 20_000): Promise<number> {
  return await waitFor(`cellReady of ${c.player.id}`, () => c.player.spaceId, ms);
}

/** Waits until `c` has entity `id` in its AoI and returns it. */
export async function seen(c: Client, id: number, ms = 15_000): Promise<ClientEntityView> {
  return await waitFor(`entity ${id} in the AoI of ${c.player.id}`, () => c.entities.get(id), ms);
}

/** Waits until `c` no longer has entity `id` in its AoI. */
export async function unseen(c: Client, id: number, ms = 10_000): Promise<void> {
  await waitFor(`entity ${id} to leave the AoI of ${c.player.id}`, () => !c.entities.has(id), ms);
}

/** One cell entity as a cellapp lists it, with the cellapp and space it is in. */
export interface CellEntityAt extends CellEntityView {
  cellapp: number;
  spaceId: number;
}

/**
 * Every cell entity (real or ghost) with id `id` on every cellapp, in space `spaceId` or in every space, as each
 * cellapp lists it through the admin API: what "one real, nowhere twice" is checked against.
 */
export async function cellEntitiesOf(admin: string, id: number, spaceId?: number): Promise<CellEntityAt[]> {
  const view = (await api(admin, "/api/cluster")).body as ClusterView;
  const spaces = spaceId !== undefined
    ? [spaceId]
    : ((await api(admin, "/api/spaces")).body as { spaces: { id: number }[] }).spaces.map((s) => s.id);
  const out: CellEntityAt[] = [];
  for (const p of view.processes.filter((p) => p.role === "cellapp")) {
    for (const s of spaces) {
      const r = await api(admin, `/api/cellapps/${p.id}/cells/${s}`);
      if (r.status !== 200) continue;
      for (const e of (r.body as { entities: CellEntityView[] }).entities) {
        if (e.id === id) out.push({ ...e, cellapp: p.id, spaceId: s });
      }
    }
  }
  return out;
}

/** A temporary directory (for KV files), removed when disposed. */
export async function tempDir(): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir();
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }).catch(() => {}) };
}
