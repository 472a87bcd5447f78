/** The Avatar's cell behaviour: what its own client may ask of it. */
import { CellScript } from "../core/script.ts";
import type { PropertyValues } from "../core/def/mod.ts";
import type { Avatar } from "./avatar.ts";

type AvatarProps = PropertyValues<typeof Avatar>;

/** Exposed cell methods of the Avatar; the caller's id comes first (BigWorld's hidden argument). */
export class AvatarCell extends CellScript<AvatarProps> {
  /** Only the avatar's own client may raise its counter. */
  raiseCounter(caller: number): void {
    if (caller === this.self.id) this.self.props.counter += 1;
  }

  /** Teleports to (x, z) of another space (or of this one); only the avatar's own client may ask. */
  async travel(caller: number, spaceId: number, x: number, z: number): Promise<void> {
    if (caller !== this.self.id) return;
    await this.self.teleport({ x, y: 0, z }, spaceId);
  }

  /**
   * Asks the base for a reward (gold is a base property, saved by the base) and tells the own client the new total:
   * an awaitable call from the cell to its base. A real game checks here whether a reward is due.
   */
  async claimReward(caller: number): Promise<void> {
    if (caller !== this.self.id || !this.self.base) return;
    const total = await this.self.base.call("addGold", 10);
    this.self.ownClient.onChat(this.self.id, `reward claimed: ${total} gold`);
  }

  /** The base joined a guild: cheer, and answer with the hp left. */
  celebrate(_caller: number): number {
    this.self.props.emote = "cheer";
    return this.self.props.hp;
  }

  /** Uses an inventory slot: one fewer of that item. */
  useItem(caller: number, slot: number): void {
    if (caller !== this.self.id) return;
    const item = this.self.props.inventory[slot];
    if (item && item.count > 0) item.count -= 1;
  }

  /** Strikes `target` for 50 hp (the dungeon's boss); only the avatar's own client may ask. */
  async strike(caller: number, target: number): Promise<void> {
    if (caller !== this.self.id) return;
    const left = await this.self.call(target, "hit", 50);
    this.self.ownClient.onChat(target, `hit: ${left} hp left`);
  }
}
