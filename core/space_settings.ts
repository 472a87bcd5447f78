/**
 * A space's own settings (AoI radius, ghost radius) and the rule they must keep: a cell holds ghosts of its
 * neighbours' entities within the ghost radius of its rect, and a witness near the border sees as far as its AoI
 * radius plus the AoI hysteresis, while its own real may stand up to the offload hysteresis outside the rect. So
 * ghost radius >= AoI radius + AoI hysteresis + offload hysteresis, or a witness misses entities of the neighbour.
 * The cellappmgr, the cellapps, the admin API and scripts all check through here, so they say the same thing.
 */
import { AOI_HYSTERESIS, OFFLOAD_HYSTERESIS } from "./config/mod.ts";

/** What a space may set; unset ones are the cluster's (`--aoi-radius`, `--ghost-radius`). */
export interface SpaceSettings {
  /** Default AoI radius of the witnesses in the space (m). */
  aoiRadius?: number;
  /** How far beyond its rect each cell of the space holds ghosts (m). */
  ghostRadius?: number;
}

/** A space's settings in force. */
export interface SpaceSettingsView {
  /** Default AoI radius of the witnesses in the space (m). */
  aoiRadius: number;
  /** How far beyond its rect each cell of the space holds ghosts (m). */
  ghostRadius: number;
}

/** The cluster's defaults when none are configured (core/config/defaults.ts's). */
export const SPACE_SETTINGS_DEFAULTS: SpaceSettingsView = {
  aoiRadius: 500,
  ghostRadius: 500 + AOI_HYSTERESIS + OFFLOAD_HYSTERESIS,
};

/** Largest radius a space setting may have (m), as the command line's. */
export const MAX_RADIUS = 100_000;

/** Longest path a space's navigation geometry file may have (characters). */
export const MAX_GEOMETRY_PATH = 1024;

/** Why `path` cannot name a space's navigation geometry file, or null when it can (the file is read by the cellapps). */
export function navGeometryError(path: unknown): string | null {
  if (typeof path === "string" && path.length > 0 && path.length <= MAX_GEOMETRY_PATH) return null;
  return `geometry ${JSON.stringify(path)} is not a file path (1 to ${MAX_GEOMETRY_PATH} characters)`;
}

/** The rule, in words, for error messages. */
export const GHOST_RULE = `ghost radius >= AoI radius + AoI hysteresis (${AOI_HYSTERESIS} m) + offload hysteresis ` +
  `(${OFFLOAD_HYSTERESIS} m)`;

/** The largest AoI radius a witness with `hysteresis` may have in a space with `ghostRadius`. */
export function maxAoIRadius(ghostRadius: number, hysteresis: number = AOI_HYSTERESIS): number {
  return ghostRadius - hysteresis - OFFLOAD_HYSTERESIS;
}

/** The settings in force: the space's own over the cluster's. */
export function spaceSettingsIn(own: SpaceSettings, defaults: SpaceSettingsView): SpaceSettingsView {
  return { aoiRadius: own.aoiRadius ?? defaults.aoiRadius, ghostRadius: own.ghostRadius ?? defaults.ghostRadius };
}

/**
 * Why `own` cannot be set on space `what` (e.g. "space 3") whose settings in force after the change would be
 * `merged`, or null when it can: each radius a number in (0, MAX_RADIUS], and the ghost rule kept.
 */
export function spaceSettingsError(what: string, own: SpaceSettings, merged: SpaceSettingsView): string | null {
  for (const key of ["aoiRadius", "ghostRadius"] as const) {
    const v = own[key];
    if (v !== undefined && !(typeof v === "number" && v > 0 && v <= MAX_RADIUS)) {
      return `${what}: ${key} ${JSON.stringify(v)} is not a radius in metres (more than 0, at most ${MAX_RADIUS})`;
    }
  }
  const least = merged.aoiRadius + AOI_HYSTERESIS + OFFLOAD_HYSTERESIS;
  if (merged.ghostRadius >= least) return null;
  const whose = (key: keyof SpaceSettings) => own[key] !== undefined ? "" : " (the space's current or the cluster's)";
  return `${what}: ghostRadius ${merged.ghostRadius} m${whose("ghostRadius")} is less than aoiRadius ` +
    `${merged.aoiRadius} m${whose("aoiRadius")} + ${AOI_HYSTERESIS} + ${OFFLOAD_HYSTERESIS}, which breaks the rule ` +
    `${GHOST_RULE} (a witness near a cell border would miss entities of the neighbouring cell): use a ghostRadius ` +
    `of at least ${least} m or an aoiRadius of at most ${maxAoIRadius(merged.ghostRadius)} m`;
}
