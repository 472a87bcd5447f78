/**
 * Navigation (docs/architecture.md, "Navigation"): a space's navigation mesh, made with Recast/Detour from the file its
 * space names and shared by the cellapp's cells, and the walk of the navigate controller along a path on it.
 */
export {
  GEOMETRY_KINDS,
  type GeometrySource,
  type HeightField,
  heightFieldTriangles,
  NavGeometryError,
  parseHeightFieldJson,
  parseObj,
  readGeometryFile,
  type Triangles,
} from "./geometry_file.ts";
export { AGENT, type PathResult, SpaceNavMesh } from "./nav_mesh.ts";
export { NavMeshes } from "./nav_meshes.ts";
export { walkPath, type WalkStep } from "./walk.ts";
