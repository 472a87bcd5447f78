import type { Config } from "../core/config.ts";
import type { Logger } from "../core/log.ts";
import { type MemberProcess, startMember } from "../core/member_process.ts";

/**
 * A cellapp process: joins the cluster and (in later parts) hosts cells,
 * their real and ghost entities, witnesses and offloading.
 */
export class CellApp {
  readonly member: MemberProcess;
  #load = 0;

  constructor(cfg: Config, log: Logger) {
    this.member = startMember("cellapp", cfg, log, () => this.#load);
  }

  /** The address other processes reach this cellapp on. */
  get address(): string {
    return this.member.server.address;
  }

  /** Stops serving; resolves once the cellappmgr has been told. */
  close(reason: string): Promise<void> {
    return this.member.close(reason);
  }
}
