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
