/**
 * The Dungeon's base: opens an instance for a party (a new space of its own, its cell part in it), brings each
 * member in, tells each member's client when the boss falls (a direct message to that player, on whichever baseapp
 * holds it), and when the last member left takes its boss (if alive) and its cell part away, which empties the space:
 * the space shuts down.
 */
import { BaseScript } from "../core/base_script.ts";
import type { PropertyValues } from "../core/def/mod.ts";
import type { Dungeon } from "./dungeon.ts";

type DungeonProps = PropertyValues<typeof Dungeon>;

/** The instance's side in metres, and how many cells it runs on. */
export const DUNGEON_SIZE = 200;
export const DUNGEON_CELLS = 1;
/** Where members arrive in it. */
export const DUNGEON_ENTRANCE = { x: 0, y: 0, z: -20 };

/** Base methods of the Dungeon. */
export class DungeonBase extends BaseScript<DungeonProps> {
  /**
   * Makes the space, then brings every member in (each member's base teleports its own cell entity). When one cannot
   * come (gone, or no player), those already in go home and the dungeon closes.
   */
  async open(): Promise<number> {
    const { spaceId } = await this.self.createInNewSpace({ size: DUNGEON_SIZE, cells: DUNGEON_CELLS });
    this.self.props.spaceId = spaceId;
    try {
      for (const member of this.self.props.party) {
        await this.self.callBase(member, "enterInstance", this.self.id, spaceId);
        this.self.props.inside.push(member);
      }
    } catch (e) {
      const came = [...this.self.props.inside];
      for (const member of came) await this.self.callBase(member, "leaveDungeon"); // the last one out closes it
      if (came.length === 0) await this.#close();
      throw e;
    }
    return spaceId;
  }

  /** The boss is dead: every member's client hears it, wherever its base is. */
  async cleared(): Promise<void> {
    this.self.props.cleared = true;
    for (const member of this.self.props.party) {
      await this.self.clientOf(member).call("onChat", this.self.id, "the boss is dead");
    }
  }

  /** A member went home; the last one out closes the instance (its cell part goes, the empty space shuts down). */
  async left(member: number): Promise<void> {
    const inside = this.self.props.inside;
    const i = inside.indexOf(member);
    if (i >= 0) inside.splice(i, 1);
    if (inside.length === 0) await this.#close();
  }

  /** Its boss goes, then its cell part: the space is empty and shuts down; then the dungeon itself goes. */
  async #close(): Promise<void> {
    if (this.self.cell.exists) {
      await this.self.cell.call("close");
      await this.self.destroyCellEntity();
    }
    await this.self.destroy();
  }
}
