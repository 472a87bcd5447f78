import { type Config, wireTls } from "./config/mod.ts";
import type { Logger } from "./log.ts";
import { Handlers, MgrLink, Peers, ProcMsg, type SpaceGeometry, WireServer } from "./wire/mod.ts";

/** The parts every cellapp and baseapp has: a peer listener and the link to the cellappmgr. */
export interface MemberProcess {
  server: WireServer;
  link: MgrLink;
  /** Channels to other cellapps and baseapps by address (accepted or dialled), sharing the handlers. */
  peers: Peers;
  /** Handlers for messages from the cellappmgr and peers; roles add theirs. */
  handlers: Handlers;
  /** Resolves with a reason when the cellappmgr asks this process to stop. */
  stopRequested: Promise<string>;
  /** Closes the link (after queued replies are written) and the listener. */
  close(reason: string): Promise<void>;
}

/** Starts listening for peers and joins the cluster as `role`. */
export function startMember(
  role: "cellapp" | "baseapp",
  cfg: Config,
  log: Logger,
  load: () => number,
  clientUrl?: () => string | null,
  entityIdHighWater?: () => number,
  spaces?: () => SpaceGeometry[],
): MemberProcess {
  let requestStop!: (reason: string) => void;
  const stopRequested = new Promise<string>((r) => (requestStop = r));
  const handlers = new Handlers().on(ProcMsg.stop, (_ch, reason) => {
    log.info(`the cellappmgr asks this process to stop: ${reason}`);
    requestStop(reason);
    return true;
  }).on(ProcMsg.exitNow, (_ch, reason) => {
    log.warn(`the cellappmgr stops this process at once: ${reason}`);
    Deno.exit(1);
  }).on(ProcMsg.fenced, (_ch, id, generation, address) => {
    log.info(
      `cellapp ${id} (generation ${generation}, ${address}) was declared dead: what still comes from it is dropped`,
    );
    link.markDead(generation);
  });
  const common = {
    role,
    secret: cfg.secret,
    tls: wireTls(cfg.tls),
    maxFrame: cfg.maxFrame,
    handlers,
    log,
  };
  let peers: Peers | null = null;
  // The cellappmgr speaks only on the link this process opened to it, never on a connection made to this one.
  const server = new WireServer({
    ...common,
    host: cfg.host,
    port: cfg.port,
    acceptRoles: ["cellapp", "baseapp"],
    onChannel: (ch) => peers?.adopt(ch),
  });
  peers = new Peers({ ...common, address: server.address }, log);
  const link = new MgrLink({
    ...common,
    mgr: cfg.mgr,
    address: server.address,
    load,
    clientUrl,
    entityIdHighWater,
    spaces,
  });
  return {
    server,
    link,
    peers,
    handlers,
    stopRequested,
    async close(reason: string) {
      await link.close(reason);
      peers?.close(reason);
      server.close(reason);
    },
  };
}
