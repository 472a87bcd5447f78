/**
 * The demo page's game logic, bundled with the SDK into app.js (`deno task browser demo/app.ts`, which `deno task
 * demo` runs): logs in, walks with WASD or to a clicked point, chats, and follows the cell holding the player. The
 * drawing and the DOM stay in web/view.js, so this module type-checks with the rest of the tree.
 */
import { type Client, connect, type EntityView, type Vec3 } from "../client/browser.ts";
import { registry } from "./defs.ts";

/** Walking speed, m/s (the baseapp's top speed is 10). */
export const SPEED = 7;
/** Moves sent per second. */
const RATE = 10;

/** Where to play, as the page server's /config.json says, and who. */
export interface DemoOptions {
  server: string;
  spaceId: number;
  bounds: [number, number, number, number];
  name: string;
  /** Where to appear; near the middle of the space when left out. */
  position?: Vec3;
}

/** What the session tells the page. */
export interface DemoView {
  /** How far it got ("connecting", "playing", "closed", "failed") with words for a person. */
  status(state: string, text: string): void;
  /** A chat line from `name` (entity `from`). */
  chat(from: number, name: string, text: string): void;
  /** The real holding the player moved from cell `from` to cell `to` (of cellapp `cellapp`), on the same connection. */
  crossed(from: number, to: number, cellapp: number): void;
}

/** An entity as the page draws it. */
export interface Shown {
  id: number;
  type: string;
  name: string;
  x: number;
  z: number;
}

/** One player's session: the SDK client and what the keys and clicks ask for. */
export class DemoSession {
  /** Keys held (w, a, s, d). */
  readonly keys: Set<string> = new Set();
  /** A clicked point to walk to, until reached or a key is pressed. */
  target: { x: number; z: number } | null = null;
  /** Cell crossings seen, and connections resumed (there should be none: crossings are seamless). */
  crossings = 0;
  reconnects = 0;
  /** The cell holding the player and its cellapp, as the server last said (0 until it says). */
  readonly cell: { id: number; cellapp: number } = { id: 0, cellapp: 0 };
  #timer: ReturnType<typeof setInterval> | undefined;
  /** When the last step ran (a background tab runs timers less often: a step covers the time since). */
  #last = Date.now();

  private constructor(readonly client: Client, readonly opts: DemoOptions, readonly view: DemoView) {}

  /** Logs in and starts walking; rejects when the login fails. */
  static async start(opts: DemoOptions, view: DemoView): Promise<DemoSession> {
    view.status("connecting", `connecting as ${opts.name}`);
    const [minX, minZ, maxX, maxZ] = opts.bounds;
    // By default near the middle, where four cells meet, a little apart from other players.
    const near = (a: number, b: number) => (a + b) / 2 + (Math.random() - 0.5) * 30;
    const position = opts.position ?? { x: near(minX, maxX), y: 0, z: near(minZ, maxZ) };
    const client = await connect(opts.server, {
      name: opts.name,
      password: "demo",
      spaceId: opts.spaceId,
      position,
    }, { registry });
    const s = new DemoSession(client, opts, view);
    client.on("close", (_code, reason) => {
      clearInterval(s.#timer);
      view.status("closed", `disconnected: ${reason}`);
    });
    client.on("resumed", () => s.reconnects++);
    client.on("clientMethod", (_e, method, args) => {
      if (method === "onChat") view.chat(args[0] as number, args[1] as string, args[2] as string);
    });
    client.on("playerMethod", (method, args) => {
      if (method === "onChat") view.chat(args[0] as number, args[1] as string, args[2] as string);
    });
    // The cell script sets cellapp, then cell (demo/mod.ts): a crossing is told once both are in.
    client.on("playerProperty", (name, value) => {
      if (name === "cellapp") s.cell.cellapp = value as number;
      if (name !== "cell") return;
      const was = s.cell.id;
      s.cell.id = value as number;
      if (was !== 0 && was !== s.cell.id) {
        s.crossings++;
        view.crossed(was, s.cell.id, s.cell.cellapp);
      }
    });
    await new Promise<void>((ok) => client.player.spaceId ? ok() : client.on("cellReady", () => ok()));
    if (client.player.spaceId !== opts.spaceId) {
      client.close();
      throw new Error(`the server put the player in space ${client.player.spaceId}, not the demo's ${opts.spaceId}`);
    }
    s.#timer = setInterval(() => {
      const now = Date.now();
      s.#step(Math.min(1, (now - s.#last) / 1000));
      s.#last = now;
    }, 1000 / RATE);
    view.status("playing", `playing as ${opts.name}`);
    return s;
  }

  /** The player's position. */
  get me(): Vec3 {
    return this.client.player.position;
  }

  /** The entities around the player. */
  get shown(): Shown[] {
    return [...this.client.entities.values()].map((e: EntityView) => ({
      id: e.id,
      type: e.type.name,
      name: String(e.props.playerName ?? e.props.name ?? ""),
      x: e.position.x,
      z: e.position.z,
    }));
  }

  /** Walks to (x, z), within the space. */
  walkTo(x: number, z: number): void {
    this.target = this.#clamp(x, z);
  }

  /** Sends a chat line to the players near this one. */
  say(text: string): void {
    const line = text.trim().slice(0, 120);
    if (line !== "") this.client.callCell(null, "chat", line);
  }

  /** Logs out. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.client.logout();
  }

  #step(dt: number): void {
    if (this.client.closed || this.client.resuming) return;
    let dx = 0, dz = 0;
    if (this.keys.has("w")) dz -= 1;
    if (this.keys.has("s")) dz += 1;
    if (this.keys.has("a")) dx -= 1;
    if (this.keys.has("d")) dx += 1;
    const me = this.me;
    if (dx !== 0 || dz !== 0) this.target = null;
    else if (this.target) {
      dx = this.target.x - me.x;
      dz = this.target.z - me.z;
      if (Math.hypot(dx, dz) < 0.2) this.target = null;
    }
    const len = Math.hypot(dx, dz);
    if (len === 0) return;
    const step = Math.min(len, SPEED * dt);
    const p = this.#clamp(me.x + (dx / len) * step, me.z + (dz / len) * step);
    this.client.move({ x: p.x, y: 0, z: p.z }, [Math.atan2(dx, dz), 0, 0]);
  }

  #clamp(x: number, z: number): { x: number; z: number } {
    const [minX, minZ, maxX, maxZ] = this.opts.bounds;
    return { x: Math.min(maxX - 0.5, Math.max(minX + 0.5, x)), z: Math.min(maxZ - 0.5, Math.max(minZ + 0.5, z)) };
  }
}

/** Logs in as `opts.name` and plays; see DemoSession. */
export function play(opts: DemoOptions, view: DemoView): Promise<DemoSession> {
  return DemoSession.start(opts, view);
}
