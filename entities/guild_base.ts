/** The Guild's base behaviour: a member list that other bases change by calling it. */
import { BaseScript } from "../core/base_script.ts";
import type { PropertyValues } from "../core/def/mod.ts";
import type { Guild } from "./guild.ts";

type GuildProps = PropertyValues<typeof Guild>;

/** Base methods of the Guild; callers are other bases (an Avatar joining), on any baseapp. */
export class GuildBase extends BaseScript<GuildProps> {
  /** Adds `member` (once) and answers with the member count; the list is written to the database at once. */
  async join(member: number): Promise<number> {
    const members = this.self.props.members;
    if (!members.includes(member)) {
      if (members.length >= 100) throw new Error(`guild ${this.self.props.name} is full`);
      members.push(member);
      await this.self.writeToDB();
    }
    return members.length;
  }

  /** Removes `member`. */
  leave(member: number): void {
    const members = this.self.props.members;
    const i = members.indexOf(member);
    if (i >= 0) members.splice(i, 1);
  }
}
