/**
 * The demo game (docs/demo.md), loaded with `--game=demo/mod.ts` like a game from another repository: players who
 * walk and chat, and NPCs that wander across the whole space, over its cell borders. The server never imports it.
 */
import { CellScript, clientPlacement, defineGame, type Game, type PropertyValues } from "../mod.ts";
import { type Avatar, registry, type Wanderer } from "./defs.ts";

export { registry } from "./defs.ts";

type AvatarProps = PropertyValues<typeof Avatar>;
type WandererProps = PropertyValues<typeof Wanderer>;

/** The player's cell part: its chat, and which cell holds it, for its own client's mini-map. */
class AvatarCell extends CellScript<AvatarProps> {
  override onCreated(): void {
    this.#noteCell();
  }

  override onEnteredCell(): void {
    this.#noteCell();
  }

  override onRestore(): void {
    this.#noteCell();
  }

  /** A chat line goes to every client that sees this player within onChat's detailDistance, its own included. */
  chat(caller: number, text: string): void {
    const line = text.trim();
    if (caller !== this.self.id || line === "") return;
    this.self.allClients.onChat(this.self.id, this.self.props.playerName, line);
  }

  #noteCell(): void {
    const cell = this.self.space.cell;
    this.self.props.cellapp = cell.cellapp;
    this.self.props.cell = cell.id;
  }
}

const NAMES = ["Ada", "Bo", "Cy", "Dee", "Eli", "Fay", "Gus", "Hal", "Ivy", "Jo", "Kit", "Lu"];

/** An NPC that walks to random points of its space, resting a little between walks. */
class WandererCell extends CellScript<WandererProps> {
  override onCreated(): void {
    this.self.props.name = `${NAMES[this.self.id % NAMES.length]} the wanderer`;
    this.#walk();
  }

  override onMove(): void {
    this.self.addTimer(0.5 + this.self.random() * 2, 0, 1);
  }

  override onTimer(): void {
    this.#walk();
  }

  #walk(): void {
    const b = this.self.space.bounds, p = this.self.position, reach = 60;
    const x = Math.min(b.maxX - 1, Math.max(b.minX + 1, p.x + (this.self.random() - 0.5) * 2 * reach));
    const z = Math.min(b.maxZ - 1, Math.max(b.minZ + 1, p.z + (this.self.random() - 0.5) * 2 * reach));
    this.self.moveToPoint({ x, y: 0, z }, 2 + this.self.random() * 2);
  }
}

/** Wanderers in every space but the default one (the demo makes its own space, cut into cells). */
const WANDERERS = 30;

/** The demo game. */
export const game: Game = defineGame({
  name: "demo",
  registry,
  cellScripts: { Avatar: AvatarCell, Wanderer: WandererCell },
  playerType: "Avatar",
  // The page asks for the demo's space and a place in it (docs/demo.md); a client still never makes a space.
  placement: clientPlacement,
  spaceCreated: (space) => space.isDefault ? [] : [{ type: "Wanderer", count: WANDERERS }],
});
