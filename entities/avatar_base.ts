/** The Avatar's base behaviour: chat, gold, guilds and the message of the day from the global store. */
import { type BaseRef, BaseScript } from "../core/base_script.ts";
import type { PropertyValues } from "../core/def/mod.ts";
import type { Avatar } from "./avatar.ts";

type AvatarProps = PropertyValues<typeof Avatar>;

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
}
