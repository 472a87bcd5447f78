/** Temporary: the algorithm lands from the i13-algo branch. */
import type { BspNode, CellRect } from "../../core/geo/bsp.ts";
import type { Rect } from "../../core/geo/rect.ts";
import type { BalanceOptions, CellLoad } from "./types.ts";

export interface CellPlanOptions {
  addAbove: number;
}
export class SpaceBalancer {
  constructor(readonly options: BalanceOptions) {}
  balance(tree: BspNode, _b: Rect, _l: ReadonlyMap<number, CellLoad>, _r?: ReadonlySet<number>): BspNode {
    return tree;
  }
}
export function addCell(tree: BspNode, _b: Rect, _id: number, _n: { id: number; cellapp: number }): BspNode {
  return tree;
}
export function planAdd(
  _c: CellRect[],
  _l: ReadonlyMap<number, CellLoad>,
  _a: { id: number; load: number }[],
  _o?: Partial<CellPlanOptions>,
): { split: number; cellapp: number } | null {
  return null;
}
export function planRetire(
  _c: CellRect[],
  _l: ReadonlyMap<number, CellLoad>,
  _a: { id: number; load: number }[],
  _o?: Partial<CellPlanOptions>,
): number | null {
  return null;
}
export function readyToLeave(
  _t: BspNode,
  _b: Rect,
  _r: ReadonlySet<number>,
  _l: ReadonlyMap<number, CellLoad>,
): number[] {
  return [];
}
