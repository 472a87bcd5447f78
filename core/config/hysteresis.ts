/** Hysteresis margins of cells and witnesses; together they bound the smallest safe ghost radius. */

/** The offload hysteresis: a real moves cell once this far outside its rect (m). */
export const OFFLOAD_HYSTERESIS = 10;
/** The witness's AoI hysteresis (m): entities leave at the radius plus this. */
export const AOI_HYSTERESIS = 5;
