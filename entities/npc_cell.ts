/** The NPC's cell behaviour: it wanders around its home, pausing between walks. */
import { CellScript } from "../core/script.ts";
import type { PropertyValues } from "../core/def/mod.ts";
import type { NPC } from "./npc.ts";

type NPCProps = PropertyValues<typeof NPC>;

const WANDER = 1;

/** Wanders within `wanderRadius` of `home` at a walking pace; now and then changes mood. */
export class NPCCell extends CellScript<NPCProps> {
  override onCreated(): void {
    const p = this.self.position;
    this.self.props.home = { x: p.x, y: p.y, z: p.z };
    this.#walk();
  }

  override onMove(): void {
    this.self.addTimer(0.5 + this.self.random() * 2.5, 0, WANDER);
  }

  override onTimer(_id: number, userArg: number): void {
    if (userArg === WANDER) this.#walk();
  }

  /**
   * Takes a hit and answers with what is left, so the attacker can react: the answer crosses cells. A boss (one with
   * a keeper) dies at 0 hp: its keeper hears it, and it is destroyed.
   */
  hit(_caller: number, amount: number): number {
    const was = this.self.props.hp;
    this.self.props.hp = Math.max(0, was - amount);
    const { keeper } = this.self.props;
    if (this.self.props.hp === 0 && was > 0 && keeper !== 0) {
      // Destroyed once the keeper answered (or failed): the call needs a live caller to come back to.
      this.self.call(keeper, "bossKilled", this.self.id)
        .catch((e) => console.error(`NPC ${this.self.id}: its keeper ${keeper} did not hear of its death: ${e}`))
        .finally(() => this.self.destroy());
    }
    return this.self.props.hp;
  }

  /**
   * Exposed: a player talks to it; it answers that player's client alone (a direct message through the player's base,
   * wherever its real and its base are).
   */
  async talkTo(caller: number, _who: number): Promise<void> {
    await this.self.clientOf(caller).call("onChat", this.self.id, `${this.self.props.name}: well met`);
  }

  /** Its keeper takes it away (a dungeon closing with its boss alive): only the keeper may. */
  despawn(caller: number): void {
    if (caller === this.self.props.keeper && caller !== 0) this.self.destroy();
  }

  /**
   * Hits `target` and reacts to the result. The target may be a ghost of an
   * entity in another cell: `call` runs `hit` on its real and the answer
   * comes back here, so the logic stays one straight-line function.
   */
  async attack(_caller: number, target: number): Promise<void> {
    const left = await this.self.call(target, "hit", 10);
    this.self.props.mood = left === 0 ? 7 : 3;
  }

  #walk(): void {
    const { home, wanderRadius } = this.self.props;
    const angle = this.self.random() * 2 * Math.PI;
    const d = this.self.random() * wanderRadius;
    this.self.moveToPoint(
      { x: home.x + Math.sin(angle) * d, y: home.y, z: home.z + Math.cos(angle) * d },
      1 + this.self.random(),
    );
    if (this.self.random() < 0.1) this.self.props.mood = Math.floor(this.self.random() * 8);
  }
}
