/**
 * A space's navigation geometry as a file (docs/game.md, "Navigation"): a Wavefront OBJ mesh (`.obj`), a height field
 * (`.json`), or a navmesh built before and exported by Recast (`.navmesh`). What is read here is triangles, or the
 * prebuilt bytes; nav_mesh.ts builds or imports the navmesh from it.
 */
import { extname } from "node:path";

/** Triangles in world coordinates: x, y, z of each vertex, and three vertex indices per triangle. */
export interface Triangles {
  positions: number[];
  indices: number[];
}

/** What a geometry file holds: triangles to build a navmesh from, or a navmesh's exported bytes. */
export type GeometrySource =
  | { kind: "triangles"; triangles: Triangles }
  | { kind: "navmesh"; data: Uint8Array };

/** A height field file: heights on a regular grid of `columns` × `rows` points from `origin` ([x, z]). */
export interface HeightField {
  origin: [number, number];
  /** The distance between neighbouring points (m). */
  cellSize: number;
  columns: number;
  rows: number;
  /** `columns * rows` heights, row by row (z), each row along x. */
  heights: number[];
}

/** A navigation geometry file that cannot be used; the message names the file and what is wrong. */
export class NavGeometryError extends Error {
  override name = "NavGeometryError";
}

/** The file kinds a space's geometry may name, by extension. */
export const GEOMETRY_KINDS: readonly string[] = [".obj", ".json", ".navmesh"];

/** Reads geometry file `path`; throws NavGeometryError naming it when it cannot be read or is not of its kind. */
export async function readGeometryFile(path: string): Promise<GeometrySource> {
  const ext = extname(path).toLowerCase();
  if (!GEOMETRY_KINDS.includes(ext)) {
    throw new NavGeometryError(
      `navigation geometry ${path}: unknown kind "${ext}" (use ${GEOMETRY_KINDS.join(", ")})`,
    );
  }
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (e) {
    throw new NavGeometryError(`navigation geometry ${path}: cannot read it: ${(e as Error).message}`, { cause: e });
  }
  if (ext === ".navmesh") return { kind: "navmesh", data: bytes };
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  try {
    return { kind: "triangles", triangles: ext === ".obj" ? parseObj(text) : parseHeightFieldJson(text) };
  } catch (e) {
    throw new NavGeometryError(`navigation geometry ${path}: ${(e as Error).message}`, { cause: e });
  }
}

/** The triangles of an OBJ mesh (`v` and `f` lines; a polygon face is cut into a fan); throws saying which line. */
export function parseObj(text: string): Triangles {
  const positions: number[] = [];
  const indices: number[] = [];
  const lines = text.split(/\r?\n/);
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n].trim();
    if (line === "" || line.startsWith("#")) continue;
    const parts = line.split(/\s+/);
    const where = () => `line ${n + 1} ("${line.slice(0, 40)}")`;
    switch (parts[0]) {
      case "v": {
        const xyz = parts.slice(1, 4).map(Number);
        if (xyz.length < 3 || !xyz.every(Number.isFinite)) throw new Error(`${where()}: a vertex needs 3 numbers`);
        positions.push(xyz[0], xyz[1], xyz[2]);
        break;
      }
      case "f": {
        const count = positions.length / 3;
        const refs = parts.slice(1).map((p) => {
          const i = Number.parseInt(p.split("/")[0], 10);
          const at = i < 0 ? count + i : i - 1;
          if (!Number.isInteger(i) || i === 0 || at < 0 || at >= count) {
            throw new Error(`${where()}: "${p}" is not one of the ${count} vertices so far`);
          }
          return at;
        });
        if (refs.length < 3) throw new Error(`${where()}: a face needs at least 3 vertices`);
        for (let k = 1; k + 1 < refs.length; k++) indices.push(refs[0], refs[k], refs[k + 1]);
        break;
      }
      case "vn":
      case "vt":
      case "vp":
      case "o":
      case "g":
      case "s":
      case "l":
      case "usemtl":
      case "mtllib":
        break;
      default:
        throw new Error(`${where()}: not an OBJ statement`);
    }
  }
  if (indices.length === 0) throw new Error("not a mesh: no faces");
  return { positions, indices };
}

/** The triangles of a height field file: JSON `{"heightField": HeightField}`; throws saying what is wrong. */
export function parseHeightFieldJson(text: string): Triangles {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Error(`not a height field: not JSON (${(e as Error).message})`, { cause: e });
  }
  const hf = (doc as { heightField?: Partial<HeightField> } | null)?.heightField;
  if (!hf || typeof hf !== "object") throw new Error(`not a height field: no "heightField" object`);
  return heightFieldTriangles(hf);
}

/** Two triangles per grid square of a height field, facing up (Recast walks on faces whose normal points up). */
export function heightFieldTriangles(hf: Partial<HeightField>): Triangles {
  const { origin, cellSize, columns, rows, heights } = hf;
  if (!Array.isArray(origin) || origin.length !== 2 || !origin.every(Number.isFinite)) {
    throw new Error(`heightField.origin must be [x, z]`);
  }
  if (!(typeof cellSize === "number" && cellSize > 0)) throw new Error(`heightField.cellSize must be > 0`);
  for (const [k, v] of [["columns", columns], ["rows", rows]] as const) {
    if (!(Number.isInteger(v) && (v as number) >= 2 && (v as number) <= 4096)) {
      throw new Error(`heightField.${k} must be a whole number from 2 to 4096`);
    }
  }
  const c = columns!, r = rows!;
  if (!Array.isArray(heights) || heights.length !== c * r || !heights.every(Number.isFinite)) {
    throw new Error(`heightField.heights must be ${c * r} numbers (columns × rows)`);
  }
  const positions: number[] = [];
  for (let j = 0; j < r; j++) {
    for (let i = 0; i < c; i++) positions.push(origin[0] + i * cellSize, heights[j * c + i], origin[1] + j * cellSize);
  }
  const indices: number[] = [];
  for (let j = 0; j + 1 < r; j++) {
    for (let i = 0; i + 1 < c; i++) {
      const a = j * c + i, b = a + 1, d = a + c, e = d + 1;
      indices.push(a, e, b, a, d, e);
    }
  }
  return { positions, indices };
}
