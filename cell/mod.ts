/** The cellapp role: cells, real and ghost entities, AOI, witnesses, offloading. */
export { CellApp } from "./cellapp.ts";
