/**
 * One space's navigation mesh (Recast/Detour in WebAssembly, npm:@recast-navigation): built from triangles or
 * imported from exported bytes, and the queries scripts and the navigate controller make on it.
 */
import { exportNavMesh, importNavMesh, type NavMesh, NavMeshQuery } from "@recast-navigation/core";
import { generateSoloNavMesh } from "@recast-navigation/generators";
import type { Vec3 } from "../../core/script.ts";
import type { GeometrySource, Triangles } from "./geometry_file.ts";

/** The walker a navmesh is built for: how wide, tall and how high a step it takes (m). */
export const AGENT = { radius: 0.5, height: 2, climb: 0.4 } as const;
/** Voxel size across and up (m): finer is more exact and slower to build. */
const CELL = 0.25, CELL_HEIGHT = 0.2;
/** How far (m) a point may be from the mesh and still count as on it: across, and up or down. */
const SNAP = { x: 1, y: 4, z: 1 };
/** How far (m) the end of a path may be from its target across, beyond which the target is unreachable. */
const REACH = 0.75;

/** A path, or why there is none. */
export type PathResult = { path: Vec3[] } | { why: string };

/** A space's navigation mesh and a query object on it (Detour queries are synchronous; one per mesh suffices). */
export class SpaceNavMesh {
  readonly #mesh: NavMesh;
  readonly #query: NavMeshQuery;

  private constructor(mesh: NavMesh, readonly name: string) {
    this.#mesh = mesh;
    this.#query = new NavMeshQuery(mesh);
  }

  /** Builds (or imports) the navmesh of `source`; `name` is for errors. Recast's WASM must have been initialised. */
  static from(source: GeometrySource, name: string): SpaceNavMesh {
    if (source.kind === "navmesh") {
      let mesh: NavMesh;
      try {
        mesh = importNavMesh(source.data).navMesh;
      } catch (e) {
        throw new Error(`navigation geometry ${name}: not an exported navmesh (${String(e)})`, { cause: e });
      }
      if (mesh.getMaxTiles() < 1 || !hasPolys(mesh)) {
        throw new Error(`navigation geometry ${name}: not an exported navmesh (no polygons in it)`);
      }
      return new SpaceNavMesh(mesh, name);
    }
    return new SpaceNavMesh(build(source.triangles, name), name);
  }

  /** The navmesh as bytes that `from({ kind: "navmesh" })` imports (a prebuilt `.navmesh` file). */
  export(): Uint8Array {
    return exportNavMesh(this.#mesh);
  }

  /** The walkable path from `from` to `to` (corner points, `to`'s nearest point on the mesh last), or why none. */
  findPath(from: Vec3, to: Vec3): PathResult {
    const q = this.#query;
    const start = q.findClosestPoint(from, { halfExtents: SNAP });
    if (!start.success || start.polyRef === 0 || flat(start.point, from) > REACH) {
      return { why: `the start (${fmt(from)}) is not on the navigation mesh of ${this.name}` };
    }
    const end = q.findClosestPoint(to, { halfExtents: SNAP });
    if (!end.success || end.polyRef === 0 || flat(end.point, to) > REACH) {
      return { why: `the target (${fmt(to)}) is not on the navigation mesh of ${this.name}` };
    }
    const r = q.computePath(start.point, end.point, { halfExtents: SNAP });
    const last = r.path[r.path.length - 1];
    if (!r.success || !last) return { why: `no path to (${fmt(to)}): ${r.error?.name ?? "Detour found none"}` };
    // Detour answers a target it cannot reach with a partial path to the nearest point it can.
    if (flat(last, end.point) > 0.1) {
      return { why: `no path to (${fmt(to)}): it is not connected to (${fmt(from)}) on the mesh of ${this.name}` };
    }
    return { path: r.path.map((p) => ({ x: p.x, y: p.y, z: p.z })) };
  }

  /**
   * Walks the mesh surface in a straight line from `from` towards `to`: the point where it leaves the walkable area (a
   * wall, a drop), or null when it gets there. Throws when `from` is not on the mesh.
   */
  raycast(from: Vec3, to: Vec3): Vec3 | null {
    const q = this.#query;
    const start = q.findClosestPoint(from, { halfExtents: SNAP });
    if (!start.success || start.polyRef === 0 || flat(start.point, from) > REACH) {
      throw new Error(`raycast: (${fmt(from)}) is not on the navigation mesh of ${this.name}`);
    }
    const hit = q.raycast(start.polyRef, start.point, to);
    if (!hit.success || !(hit.t <= 1)) return null;
    const p = start.point;
    return { x: p.x + (to.x - p.x) * hit.t, y: p.y + (to.y - p.y) * hit.t, z: p.z + (to.z - p.z) * hit.t };
  }

  /** Frees the WebAssembly memory of the mesh. */
  destroy(): void {
    this.#query.destroy();
    this.#mesh.destroy();
  }
}

/**
 * The navmesh of triangles `t` (`name` is for errors), built on this thread and exported: seconds for a large map, so
 * nav_meshes.ts runs it in build_worker.ts. Throws saying why Recast made nothing walkable.
 */
export function buildNavMeshData(t: Triangles, name: string): Uint8Array {
  const mesh = build(t, name);
  try {
    return exportNavMesh(mesh);
  } finally {
    mesh.destroy();
  }
}

function build(t: Triangles, name: string): NavMesh {
  const r = generateSoloNavMesh(t.positions, t.indices, {
    cs: CELL,
    ch: CELL_HEIGHT,
    walkableRadius: Math.ceil(AGENT.radius / CELL),
    walkableHeight: Math.ceil(AGENT.height / CELL_HEIGHT),
    walkableClimb: Math.floor(AGENT.climb / CELL_HEIGHT),
    walkableSlopeAngle: 45,
    maxEdgeLen: Math.round(12 / CELL),
    // Recast's defaults: finer detail sampling costs seconds on a slope (18 s for a 100 m height field at 0.2).
    detailSampleDist: 6,
    detailSampleMaxError: 1,
  });
  if (!r.success) throw new Error(`navigation geometry ${name}: Recast could not build a navmesh from it (${r.error})`);
  if (!hasPolys(r.navMesh)) throw new Error(`navigation geometry ${name}: it has no walkable surface`);
  return r.navMesh;
}

function hasPolys(mesh: NavMesh): boolean {
  for (let i = 0; i < mesh.getMaxTiles(); i++) {
    const header = mesh.getTile(i).header();
    if (header && header.polyCount() > 0) return true;
  }
  return false;
}

function flat(a: Vec3, b: Vec3): number {
  return Math.hypot(a.x - b.x, a.z - b.z);
}

function fmt(p: Vec3): string {
  return `${round(p.x)}, ${round(p.y)}, ${round(p.z)}`;
}

function round(v: number): number {
  return Math.round(v * 100) / 100;
}
