import type { Config } from "../core/config.ts";
import type { Logger } from "../core/log.ts";
import { type MemberProcess, startMember } from "../core/member_process.ts";
import { openKv } from "../core/kv.ts";

/**
 * A baseapp process: joins the cluster and owns persistence in Deno KV; in
 * later parts it holds base entities and proxies and serves game clients.
 */
export class BaseApp {
  readonly member: MemberProcess;
  readonly kv: Deno.Kv;

  private constructor(member: MemberProcess, kv: Deno.Kv) {
    this.member = member;
    this.kv = kv;
  }

  /** Opens the database, then joins the cluster. */
  static async start(cfg: Config, log: Logger): Promise<BaseApp> {
    const kv = await openKv(cfg.kv);
    log.info(`Deno KV open at ${cfg.kv}`);
    return new BaseApp(startMember("baseapp", cfg, log, () => 0), kv);
  }

  /** The address other processes reach this baseapp on. */
  get address(): string {
    return this.member.server.address;
  }

  /** Stops serving and closes the database once queued writes are done. */
  async close(reason: string): Promise<void> {
    await this.member.close(reason);
    this.kv.close();
  }
}
