/**
 * Property flags (BigWorld's meaning) and the audiences they route a property to.
 */

/** The eight BigWorld property flags. */
export const FLAGS = [
  "BASE",
  "BASE_AND_CLIENT",
  "CELL_PRIVATE",
  "CELL_PUBLIC",
  "CELL_PUBLIC_AND_OWN",
  "OWN_CLIENT",
  "OTHER_CLIENTS",
  "ALL_CLIENTS",
] as const;

/** One of the eight property flags. */
export type Flag = typeof FLAGS[number];

/** Where a property's value goes. `db` means persistent. */
export const AUDIENCES = [
  "base",
  "cell",
  "ghost",
  "ownClient",
  "otherClients",
  "db",
] as const;

/** One audience name. */
export type Audience = typeof AUDIENCES[number];

/** Bit per audience, for fast routing checks (`prop.mask & AUD.ghost`). */
export const AUD: { readonly [A in Audience]: number } = {
  base: 1,
  cell: 2,
  ghost: 4,
  ownClient: 8,
  otherClients: 16,
  db: 32,
};

/**
 * BigWorld's table. Whatever another client may see is also ghosted (the ghost
 * is what feeds the witnesses of neighbouring cells); CELL_PRIVATE stays on the real.
 */
const FLAG_AUDIENCES: { readonly [F in Flag]: readonly Audience[] } = {
  BASE: ["base"],
  BASE_AND_CLIENT: ["base", "ownClient"],
  CELL_PRIVATE: ["cell"],
  CELL_PUBLIC: ["cell", "ghost"],
  CELL_PUBLIC_AND_OWN: ["cell", "ghost", "ownClient"],
  OWN_CLIENT: ["cell", "ownClient"],
  OTHER_CLIENTS: ["cell", "ghost", "otherClients"],
  ALL_CLIENTS: ["cell", "ghost", "ownClient", "otherClients"],
};

/** Older spellings found in BigWorld and KBEngine files (KBEngine's demo definitions use some). */
export const FLAG_ALIASES: Readonly<Record<string, Flag>> = {
  PRIVATE: "CELL_PRIVATE",
  OTHER_CLIENT: "OTHER_CLIENTS",
  ALL_CLIENT: "ALL_CLIENTS",
};

/** Returns the flag a (possibly older) spelling stands for, or undefined. */
export function parseFlag(text: string): Flag | undefined {
  const t = text.trim().toUpperCase();
  if ((FLAGS as readonly string[]).includes(t)) return t as Flag;
  return FLAG_ALIASES[t];
}

/** The audiences of a property with this flag, plus `db` when persistent. */
export function audiencesOf(flag: Flag, persistent: boolean): Audience[] {
  const list = [...FLAG_AUDIENCES[flag]];
  if (persistent) list.push("db");
  return list;
}

/** The audiences as a bit mask (see AUD). */
export function audienceMask(flag: Flag, persistent: boolean): number {
  let m = 0;
  for (const a of audiencesOf(flag, persistent)) m |= AUD[a];
  return m;
}
