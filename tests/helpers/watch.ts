/**
 * For the watch socket tests: a cellappmgr in this process serving the admin
 * API (so a test can give the watch hub its bounds and read its stats) with
 * real cellapp processes, and a WebSocket client that keeps what it receives.
 */
import type { CellAppMgr } from "../../mgr/mod.ts";
import { type AdminServer, createAdminApp, serveAdmin } from "../../admin/mod.ts";
import { WatchHub, type WatchOptions } from "../../admin/watch.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";
import { startMgr } from "./mgr.ts";
import { game } from "../../entities/mod.ts";

/** A message from the watch socket. */
// deno-lint-ignore no-explicit-any
export type WatchMessage = Record<string, any>;

/** The cellappmgr, its admin API and watch hub, and its cellapps; disposed in reverse. */
export interface WatchCluster extends AsyncDisposable {
  mgr: CellAppMgr;
  hub: WatchHub;
  http: AdminServer;
  procs: Procs;
  /** http://127.0.0.1:PORT */
  admin: string;
  /** Headers with the bearer token (and JSON), for POSTs. */
  auth: Record<string, string>;
}

/** Starts a cellappmgr here with `npcs` in its default space and `cellapps` cellapp processes. */
export async function watchCluster(
  o: { npcs?: number; cellapps?: number; watch?: WatchOptions; token?: string } = {},
): Promise<WatchCluster> {
  const mgr = await startMgr({
    spaceCreated: game.spaceCreated,
    defaultSpace: { bounds: { minX: -500, minZ: -500, maxX: 500, maxZ: 500 }, npcs: o.npcs ?? 0 },
  });
  const hub = new WatchHub(mgr, o.watch);
  const token = o.token ?? "t0ken";
  const app = createAdminApp(mgr, { watch: hub, token, entityTypes: () => ["NPC", "Avatar"] });
  const http = await serveAdmin(app.fetch, { hostname: "127.0.0.1", port: 0, headerTimeoutMs: 10_000 });
  const procs = new Procs();
  const admin = `http://127.0.0.1:${http.port}`;
  const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const cluster: WatchCluster = {
    mgr,
    hub,
    http,
    procs,
    admin,
    auth,
    async [Symbol.asyncDispose]() {
      hub.close();
      await procs[Symbol.asyncDispose]();
      await http.close();
      mgr.close();
    },
  };
  try {
    for (let i = 0; i < (o.cellapps ?? 1); i++) {
      await procs.start(["--role=cell", "--port=0", `--mgr=${mgr.address}`]);
    }
    await waitFor("every cellapp registered", async () => {
      const got = await api(admin, "/api/cluster", { headers: auth });
      const procs = (got.body as { processes?: { role: string }[] }).processes ?? [];
      return procs.filter((p) => p.role === "cellapp").length === (o.cellapps ?? 1);
    }, 30_000);
    await waitFor("the default space with its NPCs", async () => {
      const s = await api(admin, "/api/spaces/1", { headers: auth });
      return s.status === 200 && (s.body as { cells: { reals: number }[] }).cells
            .reduce((n, c) => n + c.reals, 0) === (o.npcs ?? 0);
    }, 60_000);
  } catch (e) {
    await cluster[Symbol.asyncDispose]();
    throw e;
  }
  return cluster;
}

/** A ticket from POST /api/watch/ticket. */
export async function ticket(c: WatchCluster): Promise<string> {
  const t = await api(c.admin, "/api/watch/ticket", { method: "POST", headers: c.auth });
  if (t.status !== 201) throw new Error(`no ticket: ${t.status} ${JSON.stringify(t.body)}`);
  return (t.body as { ticket: string }).ticket;
}

/** A watch socket client that keeps every message. */
export class WatchClient {
  readonly messages: WatchMessage[] = [];
  closed: { code: number; reason: string } | null = null;
  #seen = 0;

  private constructor(readonly ws: WebSocket) {
    ws.onmessage = (e) => this.messages.push(JSON.parse(e.data));
    ws.onclose = (e) => (this.closed = { code: e.code, reason: e.reason });
  }

  /** Opens the socket with a fresh ticket and waits for it to open (or, when `closing` is allowed, to close). */
  static async open(c: WatchCluster, o: { closing?: boolean } = {}): Promise<WatchClient> {
    const ws = new WebSocket(`${c.admin.replace("http", "ws")}/api/watch?ticket=${await ticket(c)}`);
    const client = new WatchClient(ws);
    await waitFor("the watch socket to open", () => ws.readyState !== WebSocket.CONNECTING);
    if (client.closed && !o.closing) throw new Error(`the watch socket closed: ${JSON.stringify(client.closed)}`);
    return client;
  }

  send(msg: unknown): void {
    this.ws.send(typeof msg === "string" ? msg : JSON.stringify(msg));
  }

  /** The next message (after those already taken) that `match` accepts. */
  async next(what: string, match: (m: WatchMessage) => boolean, ms = 10_000): Promise<WatchMessage> {
    return await waitFor(what, () => {
      for (let i = this.#seen; i < this.messages.length; i++) {
        if (match(this.messages[i])) {
          this.#seen = i + 1;
          return this.messages[i];
        }
      }
      return null;
    }, ms);
  }

  /** Forgets what came so far: `next` looks only at later messages. */
  skip(): void {
    this.#seen = this.messages.length;
  }

  /** Closes it and waits until it is closed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.ws.close();
    await waitFor("the watch socket to close", () => this.closed !== null);
  }
}
