/** The Account's base behaviour: it notes when it last logged in. */
import { BaseScript } from "../core/base_script.ts";
import type { PropertyValues } from "../core/def/mod.ts";
import type { Account } from "./account.ts";

type AccountProps = PropertyValues<typeof Account>;

/** Base methods and callbacks of the Account. */
export class AccountBase extends BaseScript<AccountProps> {
  override onClientConnected(): void {
    this.self.props.lastLogin = Date.now();
  }

  /** Exposed: the client picks a character; this sample only says so. */
  selectAvatar(avatarName: string): void {
    this.self.callClient("chatMessage", `${avatarName} selected`);
  }
}
