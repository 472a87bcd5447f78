/** The roles a process can have; `tool` is a benchmark or test peer that never registers. */
export const ROLES = ["cellappmgr", "cellapp", "baseapp", "tool"] as const;
/** One of ROLES. */
export type Role = typeof ROLES[number];
