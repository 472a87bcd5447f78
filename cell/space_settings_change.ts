/**
 * A script asks for its space's settings to change: checked here first, so that nothing the wire check would refuse
 * (and drop the channel for) is sent, then the cellappmgr checks and spreads it.
 */
import { errorText } from "../core/errors.ts";
import {
  type SpaceSettings,
  spaceSettingsError,
  spaceSettingsIn,
  type SpaceSettingsView,
} from "../core/space_settings.ts";
import type { CellHost } from "./cell_host.ts";
import { spaceSettingsOf, type WitnessCell } from "./witness/mod.ts";

/** What a settings change needs of the cell of the script that asks. */
export interface SettingsCell extends WitnessCell {
  readonly spaceId: number;
  readonly host: Pick<CellHost, "setSpaceSettings">;
}

/** Asks for the settings of `cell`'s space to change (`who` is the entity asking); resolves to those in force. */
export async function changeSpaceSettings(
  cell: SettingsCell,
  change: SpaceSettings,
  who: string,
): Promise<SpaceSettingsView> {
  const host = cell.host;
  const unknown = Object.keys(change).filter((k) => k !== "aoiRadius" && k !== "ghostRadius");
  if (unknown.length > 0) throw new Error(`setSpaceSettings by ${who}: no space setting ${unknown.join(", ")}`);
  const own: SpaceSettings = {};
  if (change.aoiRadius !== undefined) own.aoiRadius = change.aoiRadius;
  if (change.ghostRadius !== undefined) own.ghostRadius = change.ghostRadius;
  const bad = spaceSettingsError(`space ${cell.spaceId}`, own, spaceSettingsIn(own, spaceSettingsOf(cell)));
  if (bad) throw new RangeError(`setSpaceSettings by ${who}: ${bad}`);
  try {
    return await host.setSpaceSettings(cell.spaceId, own);
  } catch (e) {
    throw new Error(`setSpaceSettings by ${who}: ${errorText(e)}`, { cause: e });
  }
}
