/** The Dungeon's cell part: spawns the boss where the party arrives, and tells its base when the boss falls. */
import { CellScript } from "../core/script.ts";
import type { PropertyValues } from "../core/def/mod.ts";
import type { Dungeon } from "./dungeon.ts";

type DungeonProps = PropertyValues<typeof Dungeon>;

/** Where the boss waits, and its name. */
export const BOSS_POSITION = { x: 10, y: 0, z: 0 };
export const BOSS_NAME = "Boss";

/** Cell methods and callbacks of the Dungeon. */
export class DungeonCell extends CellScript<DungeonProps> {
  override onCreated(): void {
    // Its instance gets a boss; a keeper placed in the shared world (to test, or to wait there) spawns none.
    if (this.self.space.isDefault) return;
    this.self.props.boss = this.self.createEntity("NPC", BOSS_POSITION, {
      name: BOSS_NAME,
      wanderRadius: 2,
      keeper: this.self.id,
    });
  }

  /** The boss died (its own cell script calls this): the base hears it. */
  async bossKilled(_caller: number, boss: number): Promise<void> {
    if (boss !== this.self.props.boss || !this.self.base) return;
    this.self.props.boss = 0;
    await this.self.base.call("cleared");
  }

  /** The dungeon closes: its boss, if still alive, goes with it. */
  async close(_caller: number): Promise<void> {
    const boss = this.self.props.boss;
    this.self.props.boss = 0;
    if (boss !== 0) await this.self.call(boss, "despawn");
  }
}
