/**
 * What the cellappmgr shows operators: the JSON shapes of the admin API,
 * shared by mgr/ (which builds them) and admin/ (which serves them).
 */

/** One process of the cluster as /api/cluster lists it. */
export interface ProcessView {
  id: number;
  role: "cellappmgr" | "cellapp" | "baseapp";
  pid: number;
  /** Listening address for other processes, HOST:PORT. */
  address: string;
  /** Baseapps that serve clients: their WebSocket URL. */
  clientUrl?: string;
  uptimeS: number;
  lastHeartbeatMsAgo: number;
  /** Share of the tick budget spent, smoothed. */
  load: number;
}

/** The body of GET /api/cluster. */
export interface ClusterView {
  processes: ProcessView[];
}

/** The body of GET /api/health. */
export interface HealthView {
  ok: true;
  role: "cellappmgr";
  version: string;
}

/** The body of POST /api/shutdown's reply. */
export interface ShutdownView {
  stopping: true;
  processes: number;
}
