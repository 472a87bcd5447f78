/**
 * The navigation meshes of a cellapp's spaces, by geometry: a mesh is read and built once and shared by every cell of
 * every space on the cellapp that names the same file (docs/architecture.md, "Navigation").
 */
import { resolve } from "node:path";
import { init } from "@recast-navigation/core";
import { NavGeometryError, readGeometryFile, type Triangles } from "./geometry_file.ts";
import type { BuildAnswer, BuildRequest } from "./build_worker.ts";
import { SpaceNavMesh } from "./nav_mesh.ts";

/** A mesh being made, made, or failed, for one geometry file. */
type Entry =
  | { state: "loading"; done: Promise<SpaceNavMesh> }
  | { state: "ready"; mesh: SpaceNavMesh }
  | { state: "failed"; error: Error };

/** A process's navmeshes by the geometry they are made from (its resolved path): one build per geometry. */
export class NavMeshes {
  readonly #byGeometry = new Map<string, Entry>();

  /** The mesh of `geometry` if it is made; undefined while loading (or never asked for); throws the error if it failed. */
  get(geometry: string): SpaceNavMesh | undefined {
    const entry = this.#byGeometry.get(resolve(geometry));
    if (entry?.state === "failed") throw entry.error;
    return entry?.state === "ready" ? entry.mesh : undefined;
  }

  /**
   * The mesh of `geometry`: read and built the first time, then the same one. A failure (the file missing, not a mesh)
   * rejects with one NavGeometryError naming the file, and every later call gets the same error without reading again.
   */
  load(geometry: string): Promise<SpaceNavMesh> {
    const key = resolve(geometry);
    const had = this.#byGeometry.get(key);
    if (had?.state === "ready") return Promise.resolve(had.mesh);
    if (had?.state === "failed") return Promise.reject(had.error);
    if (had) return had.done;
    const done = (async () => {
      const source = await readGeometryFile(geometry);
      // Built in a worker (seconds for a large map); importing the result here takes milliseconds.
      const data = source.kind === "navmesh" ? source.data : await buildInWorker(source.triangles, geometry);
      await init();
      try {
        return SpaceNavMesh.from({ kind: "navmesh", data }, geometry);
      } catch (e) {
        throw e instanceof NavGeometryError ? e : new NavGeometryError((e as Error).message, { cause: e });
      }
    })();
    this.#byGeometry.set(key, { state: "loading", done });
    done.then(
      (mesh) => this.#byGeometry.set(key, { state: "ready", mesh }),
      (error: Error) => this.#byGeometry.set(key, { state: "failed", error }),
    );
    return done;
  }

  /** Whether `geometry` was asked for (made, being made, or failed). */
  has(geometry: string): boolean {
    return this.#byGeometry.has(resolve(geometry));
  }

  /**
   * Frees the mesh of `geometry` (no cell uses it any more): a later load reads the file again. One still being made
   * is kept.
   */
  release(geometry: string): void {
    const key = resolve(geometry);
    const entry = this.#byGeometry.get(key);
    if (entry?.state === "loading") return;
    if (entry?.state === "ready") entry.mesh.destroy();
    this.#byGeometry.delete(key);
  }

  /** How many meshes are made. */
  get size(): number {
    let n = 0;
    for (const e of this.#byGeometry.values()) if (e.state === "ready") n++;
    return n;
  }

  /** Frees every mesh (the cellapp stops). */
  clear(): void {
    for (const e of this.#byGeometry.values()) if (e.state === "ready") e.mesh.destroy();
    this.#byGeometry.clear();
  }
}

/** Builds the navmesh of `triangles` in a worker thread; resolves with its exported bytes, rejects naming `name`. */
function buildInWorker(triangles: Triangles, name: string): Promise<Uint8Array> {
  const worker = new Worker(new URL("./build_worker.ts", import.meta.url), { type: "module" });
  return new Promise<Uint8Array>((resolve, reject) => {
    worker.onmessage = (ev: MessageEvent<BuildAnswer>) => {
      const a = ev.data;
      if ("data" in a) resolve(a.data);
      else reject(new NavGeometryError(a.error));
    };
    worker.onerror = (ev) => {
      ev.preventDefault();
      reject(new NavGeometryError(`navigation geometry ${name}: the build failed: ${ev.message}`));
    };
    const request: BuildRequest = { triangles, name };
    worker.postMessage(request);
  }).finally(() => worker.terminate());
}
