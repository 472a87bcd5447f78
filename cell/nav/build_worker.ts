/**
 * Builds one navmesh in a worker thread (nav_meshes.ts): Recast takes seconds on a large map, which on the cellapp's
 * own thread would stall its ticks and heartbeats. Gets `{ triangles, name }`, answers `{ data }` (the exported navmesh)
 * or `{ error }`, then ends.
 */
import { init } from "@recast-navigation/core";
import { buildNavMeshData } from "./nav_mesh.ts";
import type { Triangles } from "./geometry_file.ts";

/** What the worker is sent. */
export interface BuildRequest {
  triangles: Triangles;
  name: string;
}

/** What the worker answers. */
export type BuildAnswer = { data: Uint8Array } | { error: string };

const scope = self as unknown as {
  onmessage: ((ev: MessageEvent<BuildRequest>) => void) | null;
  postMessage(answer: BuildAnswer, transfer?: Transferable[]): void;
  close(): void;
};

scope.onmessage = async (ev) => {
  try {
    await init();
    const data = buildNavMeshData(ev.data.triangles, ev.data.name);
    scope.postMessage({ data }, [data.buffer as ArrayBuffer]);
  } catch (e) {
    scope.postMessage({ error: e instanceof Error ? e.message : String(e) });
  } finally {
    scope.close();
  }
};
