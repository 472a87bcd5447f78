/**
 * Checks the controllers of a backup before they are restored: a backup of a base's cell entity comes back from its
 * baseapp, and a malformed controller would fail in every tick of the cell that took it.
 */
import { MAX_COORD } from "../../core/geo/mod.ts";

const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isId = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= 0 && (v as number) < 2 ** 53;
const isPos = (v: unknown): v is number => isNum(v) && v >= 0;
const isCoord = (v: unknown): boolean => isNum(v) && Math.abs(v) <= MAX_COORD;

/** The most corners a navigation's path may carry (Detour's straight paths are far shorter). */
const MAX_PATH = 4096;

function isPoint(v: unknown): boolean {
  const d = v as Record<string, unknown> | null;
  return typeof d === "object" && d !== null && isCoord(d.x) && isCoord(d.y) && isCoord(d.z);
}

/** What is wrong with controller state `c`, or null when it can be restored. */
export function controllerProblem(c: unknown): string | null {
  if (typeof c !== "object" || c === null) return "not an object";
  const o = c as Record<string, unknown>;
  if (!isId(o.id)) return `id ${String(o.id)} is not a controller id`;
  if (!isNum(o.userArg)) return "userArg is not a finite number";
  switch (o.kind) {
    case "timer":
      return isPos(o.dueInMs) && isPos(o.repeatMs) ? null : "dueInMs and repeatMs must be numbers >= 0";
    case "rangeTrigger":
      return isPos(o.radius) ? null : "radius must be a number >= 0";
    case "moveToPoint": {
      const d = o.dest as Record<string, unknown> | null;
      if (typeof d !== "object" || d === null || !isCoord(d.x) || !isCoord(d.y) || !isCoord(d.z)) {
        return `dest must be a point within ±${MAX_COORD} m`;
      }
      return isPos(o.speed) && o.speed > 0 && typeof o.faceMovement === "boolean"
        ? null
        : "speed must be > 0 and faceMovement a boolean";
    }
    case "navigate": {
      if (!isPoint(o.dest)) return `dest must be a point within ±${MAX_COORD} m`;
      if (!Array.isArray(o.path) || o.path.length > MAX_PATH || !o.path.every(isPoint)) {
        return `path must be at most ${MAX_PATH} points within ±${MAX_COORD} m`;
      }
      if (o.failed !== undefined && typeof o.failed !== "string") return "failed must be a reason";
      return isPos(o.speed) && o.speed > 0 && typeof o.faceMovement === "boolean"
        ? null
        : "speed must be > 0 and faceMovement a boolean";
    }
    case "moveToEntity":
      return isId(o.targetId) && isPos(o.speed) && o.speed > 0 && isPos(o.range) && typeof o.faceMovement === "boolean"
        ? null
        : "targetId, speed > 0, range >= 0 and faceMovement are required";
    default:
      return `unknown kind ${JSON.stringify(o.kind)}`;
  }
}
