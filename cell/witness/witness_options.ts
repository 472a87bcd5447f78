/** Witness settings: per witness, per space (configureSpaceAoI, kept by the cell), and the defaults. */

/** Witness settings; unset ones come from the space's (configureSpaceAoI), then from WITNESS_DEFAULTS. */
export interface WitnessOptions {
  /** Half-side of the AoI square, metres. */
  aoiRadius?: number;
  /** Entities enter within aoiRadius and leave beyond aoiRadius + hysteresis. */
  hysteresis?: number;
  /** Bytes the client may be sent per tick (own-client messages included). */
  bytesPerTick?: number;
  /** BigWorld's MAX_PRIORITY_DELTA: a tick goes no further than this past the first priority. */
  maxPriorityDelta?: number;
  /** Priority delta = (distance * distanceWeighting + 1) * weighting. */
  distanceWeighting?: number;
  weighting?: number;
  /** A cache's delta may grow by at most this factor per send (so a jump in distance can't starve it). */
  deltaGrowthThrottle?: number;
  /** How long a cache waits for the client's request before it is created with everything. */
  requestTimeoutMs?: number;
  /** The reference position follows the witness once it is this far off on an axis. */
  referenceThreshold?: number;
  /** Scale of packed positions; by default the AoI (plus hysteresis) just fits. */
  packedScale?: number;
  /** Id aliases available (at most 255). */
  maxAliases?: number;
  /** Event history horizon of the entities seen, ms (60 s, as in BigWorld). */
  historyHorizonMs?: number;
  /** Told of bad client input (cheating or a broken client): what it was. */
  onBadInput?: (what: string) => void;
}

/** Defaults: BigWorld's (AoI 500 m, update scheme distance/5 + 1, sends within ~45 m every tick). */
export const WITNESS_DEFAULTS = {
  aoiRadius: 500,
  hysteresis: 5,
  bytesPerTick: 1400,
  maxPriorityDelta: 10,
  distanceWeighting: 0.2,
  weighting: 1,
  deltaGrowthThrottle: 2,
  requestTimeoutMs: 5000,
  referenceThreshold: 1,
  maxAliases: 255,
  historyHorizonMs: 60_000,
} as const;

/** What keeps a space's AoI defaults: its cell (a WitnessCell). */
export interface AoIOptionsOwner {
  aoiOptions: WitnessOptions;
}

/** Sets a space's (cell's) AoI defaults for witnesses created afterwards. */
export function configureSpaceAoI(cell: AoIOptionsOwner, opts: WitnessOptions): void {
  cell.aoiOptions = { ...cell.aoiOptions, ...opts };
}
