/**
 * The example page's game logic, bundled with the SDK and the sample game's definitions into app.js: logs in to a
 * baseapp, walks the player in a circle, and hands what it sees to the page's view (index.html draws it: the DOM
 * code stays in the page, so this module type-checks with the rest of the tree, without the DOM's types).
 */
import { connect, type EntityView, type Vec3 } from "../../client/browser.ts";
import { registry } from "../../entities/mod.ts";

/** Where and who. */
export interface PlayOptions {
  /** A baseapp's client URL, ws://HOST:PORT/. */
  server: string;
  name: string;
  password: string;
  /** A place to ask for (a baseapp with `--client-spawn` grants it). */
  position?: Vec3;
}

/** What the page shows. */
export interface PlayView {
  /** How far it got: "connecting", "playing", "closed" or "failed", with words for a person. */
  status(state: string, text: string): void;
  player(id: number): void;
  /** The entities around the player and where the player is; called whenever something moved. */
  render(entities: EntityView[], me: Vec3): void;
}

/** Walking speed (m/s) and the radius of the circle walked (m). */
const SPEED = 4, RADIUS = 15;

/** Logs in and plays until the connection closes; failures go to view.status. */
export async function play(opts: PlayOptions, view: PlayView): Promise<void> {
  try {
    view.status("connecting", `connecting to ${opts.server} as ${opts.name}`);
    const creds = { name: opts.name, password: opts.password, position: opts.position };
    const client = await connect(opts.server, creds, { registry });
    view.player(client.player.id);
    client.on("close", (_code, reason) => view.status("closed", `closed: ${reason}`));
    await new Promise<void>((ok) => client.player.spaceId ? ok() : client.on("cellReady", () => ok()));
    view.status("playing", `playing in space ${client.player.spaceId}`);

    // Walk a circle from where the server put us, reporting the position ten times a second.
    const start = { ...client.player.position };
    let angle = 0;
    const walk = setInterval(() => {
      angle += (SPEED * 0.1) / RADIUS;
      const p = { x: start.x + RADIUS * Math.sin(angle), y: 0, z: start.z - RADIUS + RADIUS * Math.cos(angle) };
      client.move(p);
      view.render([...client.entities.values()], p);
    }, 100);
    client.on("close", () => clearInterval(walk));
  } catch (e) {
    view.status("failed", `failed: ${(e as Error).message}`);
  }
}
