/**
 * A test registry (the game's Avatar plus a base-only property and an unexposed base method) and a baseapp in this
 * process joined to a real cellappmgr and cellapp (main.ts processes, killed by pid when the test ends).
 */
import { createRegistry, type EntityRegistry, T } from "../../core/def/mod.ts";
import { Account, Avatar, baseScripts, Dungeon, Guild, NPC } from "../../entities/mod.ts";
import { BaseApp, type BaseAppOptions } from "../../base/mod.ts";
import { clientPlacement } from "../../core/placement.ts";
import { type Client, connect, type Credentials } from "../../client/mod.ts";
import type { Config } from "../../core/config/mod.ts";
import { memoryLogger } from "../../testing/log.ts";
import { Procs } from "../../testing/procs.ts";
import { baseConfig, type LocalCluster, startCluster } from "../helpers/players.ts";

/**
 * Avatar with a base-only persistent property and an unexposed base method. Both come after the game's own, so the
 * indexes the cellapps (which run the game's registry) use for cell and client properties and methods are the same.
 */
export const TestAvatar = {
  ...Avatar,
  properties: {
    ...Avatar.properties,
    secretNote: { type: T.string(64), flags: "BASE", persistent: true },
  },
  baseMethods: {
    ...Avatar.baseMethods,
    grantGold: { args: [{ name: "amount", type: T.UINT32 }] },
  },
} as const;

/** The registry tests use: Account 0, Avatar 1, NPC 2, Guild 3, Dungeon 4, like the game's. */
export const testRegistry: EntityRegistry = createRegistry({
  entities: [Account, TestAvatar, NPC, Guild, Dungeon],
});

/** A baseapp in this process against a real cluster; dispose to stop the baseapp, then the processes. */
export interface TestBase extends AsyncDisposable {
  app: BaseApp;
  cluster: LocalCluster;
  /** The cellappmgr's admin API. */
  admin: string;
  log: ReturnType<typeof memoryLogger>;
}

/**
 * Starts a cellappmgr and a cellapp (or uses `cluster`), then a BaseApp in this process with fast hashing, the
 * game's base scripts (Avatar's `say` adds a gold piece and echoes through onChat), and clients choosing where they
 * appear (clientPlacement) unless `opts` says otherwise.
 */
export async function startBase(
  opts: Partial<BaseAppOptions> = {},
  over: { cluster?: LocalCluster; config?: Partial<Config> } = {},
): Promise<TestBase> {
  const procs = new Procs();
  try {
    const cluster = over.cluster ?? await startCluster(procs);
    const log = memoryLogger();
    const app = await BaseApp.start(baseConfig(cluster.mgrAddress, over.config), log, {
      registry: testRegistry,
      passwordIterations: 1000,
      placement: clientPlacement,
      baseScripts,
      ...opts,
    });
    await app.member.link.registered;
    return {
      app,
      cluster,
      admin: cluster.admin,
      log,
      async [Symbol.asyncDispose]() {
        try {
          await app.close("test over");
        } finally {
          await procs[Symbol.asyncDispose]();
        }
      },
    };
  } catch (e) {
    await procs[Symbol.asyncDispose]();
    throw e;
  }
}

/** Logs a client in through the SDK (password "pw" unless given). */
export function login(app: BaseApp, creds: Partial<Credentials> & { name: string }): Promise<Client> {
  return connect(app.clientUrl, { password: "pw", ...creds }, { registry: testRegistry });
}

/** Collects a client's error replies as [code, about, message]. */
export function errorsOf(c: Client): [number, number, string][] {
  const out: [number, number, string][] = [];
  c.on("error", (code, message, about) => out.push([code, about, message]));
  return out;
}
