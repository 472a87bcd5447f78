/** A test registry (the sample Avatar plus a counter and an unexposed base method) and helpers to start a baseapp. */
import { createRegistry, type EntityRegistry, T } from "../../core/def/mod.ts";
import { Account, Avatar, NPC } from "../../entities/mod.ts";
import { BaseApp, type BaseAppOptions } from "../../base/mod.ts";
import { type Client, connect, type Credentials } from "../../client/mod.ts";
import { FakeCluster } from "./fake_cluster.ts";
import { memoryLogger } from "../helpers/log.ts";

/** Avatar with `counter` (what the bots raise) and an unexposed base method. */
export const TestAvatar = {
  ...Avatar,
  properties: {
    ...Avatar.properties,
    counter: { type: T.UINT32, flags: "ALL_CLIENTS" },
    secretNote: { type: T.string(64), flags: "BASE", persistent: true },
  },
  baseMethods: {
    ...Avatar.baseMethods,
    grantGold: { args: [{ name: "amount", type: T.UINT32 }] },
  },
} as const;

/** The registry tests use: Account 0, Avatar 1, NPC 2, like the game's. */
export const testRegistry: EntityRegistry = createRegistry({
  entities: [Account, TestAvatar, NPC],
});

/** A baseapp against a fake cluster, with fast hashing; dispose to stop both. */
export async function startBase(opts: BaseAppOptions = {}): Promise<
  { app: BaseApp; fake: FakeCluster; log: ReturnType<typeof memoryLogger> } & AsyncDisposable
> {
  const fake = new FakeCluster();
  const log = memoryLogger();
  const app = await BaseApp.start(fake.config(), log, {
    registry: testRegistry,
    passwordIterations: 1000,
    baseScripts: {
      Avatar: {
        say(self, text: string) {
          self.props.gold = (self.props.gold as number) + 1;
          self.callClient("onChat", self.id, `echo: ${text}`);
        },
      },
    },
    ...opts,
  });
  await app.member.link.registered;
  return {
    app,
    fake,
    log,
    async [Symbol.asyncDispose]() {
      await app.close("test over");
      fake.close();
    },
  };
}

/** Logs a client in through the SDK. */
export function login(app: BaseApp, creds: Partial<Credentials> & { name: string }): Promise<Client> {
  return connect(app.clientUrl, { password: "pw", ...creds }, { registry: testRegistry });
}
