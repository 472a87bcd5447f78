/**
 * The Avatar's base behaviour: chat, gold, guilds, the message of the day from the global store, and dungeon
 * instances (entities/dungeon_base.ts).
 */
import { type BaseRef, BaseScript } from "../core/base_script.ts";
import type { PropertyValues } from "../core/def/mod.ts";
import type { Avatar } from "./avatar.ts";
import { DUNGEON_ENTRANCE } from "./dungeon_base.ts";

type AvatarProps = PropertyValues<typeof Avatar>;

/** Where a player leaving a dungeon arrives: the sample's spawn point in the default space. */
export const DUNGEON_EXIT = { spaceId: 1, position: { x: 0, y: 0, z: 0 } };

/** The global key of the message of the day, which every avatar's client hears when it changes. */
export const MOTD_KEY = "motd";

/** Base methods and callbacks of the Avatar. */
export class AvatarBase extends BaseScript<AvatarProps> {
  override onClientConnected(): void {
    const motd = this.self.globalData.get(MOTD_KEY);
    if (typeof motd === "string") this.self.callClient("onChat", 0, `motd: ${motd}`);
  }

  override onGlobalData(key: string, value: unknown): void {
    if (key === MOTD_KEY && typeof value === "string") this.self.callClient("onChat", 0, `motd: ${value}`);
  }

  /** Exposed: echoes the text to the own client; each message earns a gold piece. */
  say(text: string): void {
    this.self.props.gold += 1;
    this.self.callClient("onChat", this.self.id, `echo: ${text}`);
  }

  /** Not exposed (the cell's claimReward calls it): adds gold, writes it to the database now, answers the total. */
  async addGold(amount: number): Promise<number> {
    this.self.props.gold += amount;
    await this.self.writeToDB();
    return this.self.props.gold;
  }

  /**
   * Exposed: joins guild `name`. Guilds are base-only entities found through the global store (`guild:NAME`), made
   * on the least loaded baseapp when missing; the guild may be on another baseapp, the call is awaited all the same.
   * Two players founding the same guild at once may make two: a real game asks one matchmaker base to found them.
   */
  async joinGuild(name: string): Promise<void> {
    const key = `guild:${name}`;
    let guild = this.self.globalData.get(key) as BaseRef | undefined;
    if (!guild) {
      guild = await this.self.createBaseAnywhere("Guild", { name });
      await this.self.globalData.set(key, { id: guild.id, address: guild.address });
    }
    const count = await this.self.callBase(guild, "join", this.self.id);
    this.self.callClient("onChat", 0, `joined ${name} (${count} members)`);
    if (this.self.cell.exists) await this.self.cell.call("celebrate");
  }

  /**
   * Exposed: opens a dungeon for this player and `partner`: a Dungeon base made on the least loaded baseapp, which
   * makes its own space and brings both in (enterInstance).
   */
  async openDungeon(partner: number): Promise<void> {
    if (this.self.props.instance !== 0) throw new Error(`Avatar ${this.self.id} is in a dungeon already`);
    const dungeon = await this.self.createBaseAnywhere("Dungeon", { party: [this.self.id, partner] });
    const spaceId = await this.self.callBase(dungeon, "open");
    this.self.callClient("onChat", dungeon.id, `dungeon open in space ${spaceId}`);
  }

  /** Not exposed: the dungeon brings this avatar into its space; the base has its cell entity teleport there. */
  async enterInstance(dungeon: number, spaceId: number): Promise<void> {
    if (this.self.props.instance !== 0) throw new Error(`Avatar ${this.self.id} is in a dungeon already`);
    await this.self.teleport(DUNGEON_ENTRANCE, spaceId);
    this.self.props.instance = dungeon;
  }

  /** Exposed: back to the default space; the dungeon hears it (the last one out closes it). */
  async leaveDungeon(): Promise<void> {
    const dungeon = this.self.props.instance;
    if (dungeon === 0) throw new Error(`Avatar ${this.self.id} is in no dungeon`);
    await this.self.teleport(DUNGEON_EXIT.position, DUNGEON_EXIT.spaceId);
    this.self.props.instance = 0;
    await this.self.callBase(dungeon, "left", this.self.id);
  }
}
