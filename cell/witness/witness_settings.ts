/**
 * The witness settings a script may change (its AoI radius, byte budget and priority weights), each checked with an
 * error that names the entity, the value and the rule; and how a change of the space's settings reaches the
 * witnesses of a cell. Settings a script set are the witness's own: they travel with it to another cell and do not
 * follow the space's AoI radius.
 */
import type { WitnessSettings } from "../../core/script.ts";
import { GHOST_RULE, maxAoIRadius, type SpaceSettingsView } from "../../core/space_settings.ts";
import { OFFLOAD_HYSTERESIS } from "../../core/config/mod.ts";
import type { WitnessCell } from "./host.ts";
import type { Witness } from "./witness.ts";
import { WITNESS_DEFAULTS } from "./witness_options.ts";

export type { WitnessSettings } from "../../core/script.ts";

/** Each setting's accepted values, in words for the error, and the test. */
const RULES: Record<keyof WitnessSettings, { what: string; ok: (v: number) => boolean }> = {
  aoiRadius: { what: "a radius in metres, more than 0", ok: (v) => v > 0 },
  bytesPerTick: { what: "an integer number of bytes from 100 to 1000000", ok: (v) => v >= 100 && v <= 1e6 },
  distanceWeighting: { what: "a number from 0 to 1000", ok: (v) => v >= 0 && v <= 1000 },
  weighting: { what: "a number more than 0, at most 1000000", ok: (v) => v > 0 && v <= 1e6 },
  maxPriorityDelta: { what: "a number more than 0, at most 1000000", ok: (v) => v > 0 && v <= 1e6 },
};

/** The settings of a cell's space in force, as the cell has them. */
export function spaceSettingsOf(cell: WitnessCell): SpaceSettingsView {
  return {
    aoiRadius: cell.aoiOptions.aoiRadius ?? WITNESS_DEFAULTS.aoiRadius,
    ghostRadius: cell.ghostRadius ?? Infinity,
  };
}

/** The settings of a witness in force. */
export function witnessSettingsOf(w: Witness): WitnessSettings {
  const o = w.opts;
  return {
    aoiRadius: o.aoiRadius,
    bytesPerTick: o.bytesPerTick,
    distanceWeighting: o.distanceWeighting,
    weighting: o.weighting,
    maxPriorityDelta: o.maxPriorityDelta,
  };
}

/**
 * Changes a witness's settings from its entity's script: every value is checked before any is applied, the AoI
 * radius against the ghost rule of the space the cell is in. Throws a RangeError saying which value and why.
 */
export function setWitnessSettings(w: Witness, change: Partial<WitnessSettings>, call = "setWitnessSettings"): void {
  const e = w.entity;
  const who = `${call}: ${e.type.name} ${e.id} (space ${e.cell.spaceId})`;
  for (const [key, v] of Object.entries(change)) {
    const rule = RULES[key as keyof WitnessSettings];
    if (!rule) throw new RangeError(`${who}: no witness setting "${key}"; the settings are ${Object.keys(RULES)}`);
    if (v === undefined) continue;
    const integer = key !== "bytesPerTick" || Number.isInteger(v);
    if (typeof v !== "number" || !Number.isFinite(v) || !integer || !rule.ok(v)) {
      throw new RangeError(`${who}: ${key} ${JSON.stringify(v)} is not ${rule.what}`);
    }
  }
  if (change.aoiRadius !== undefined) {
    const ghost = e.cell.ghostRadius, max = maxAoIRadius(ghost, w.hysteresis);
    if (change.aoiRadius > max) {
      throw new RangeError(
        `${who}: an AoI radius of ${change.aoiRadius} m is beyond what the space's ghost radius (${ghost} m) allows: ` +
          `the rule is ghost radius >= AoI radius + AoI hysteresis (${w.hysteresis} m) + offload hysteresis ` +
          `(${OFFLOAD_HYSTERESIS} m), so at most ${max} m (or raise the space's ghostRadius first)`,
      );
    }
  }
  for (const [key, v] of Object.entries(change)) {
    if (v === undefined) continue;
    w.scripted.add(key);
    if (key === "aoiRadius") {
      if (v !== w.aoiRadius) w.setAoIRadius(v);
    } else (w.opts as unknown as Record<string, number>)[key] = v;
  }
}

/**
 * The cell's space has new settings: its AoI radius (when the space sets one) becomes the default of witnesses
 * created here, and the radius of those whose script set none; a witness whose radius the space's ghost radius no
 * longer allows is brought down to the largest it allows, with a warning.
 */
export function applySpaceSettings(cell: WitnessCell, aoiRadius: number | undefined): void {
  if (aoiRadius !== undefined) cell.aoiOptions = { ...cell.aoiOptions, aoiRadius };
  for (const w of cell.witnesses as Set<Witness>) {
    const max = maxAoIRadius(cell.ghostRadius ?? Infinity, w.hysteresis);
    let r = aoiRadius !== undefined && !w.scripted.has("aoiRadius") ? aoiRadius : w.aoiRadius;
    if (r > max) {
      w.entity.cell.host.log.warn(
        `witness of ${w.entity.type.name} ${w.entity.id}: its AoI radius ${r} m is beyond what the space's new ghost ` +
          `radius (${cell.ghostRadius} m) allows (${GHOST_RULE}); it is now ${max} m`,
      );
      r = max;
    }
    if (r !== w.aoiRadius) w.setAoIRadius(r);
  }
}
