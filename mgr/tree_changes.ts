/**
 * Changes to the BSP trees of live spaces: a dead cellapp's cells leave their
 * trees, load balancing gives a space a new tree, and a space that lost its
 * only cell gets a new one on a live cellapp (docs/faults.md, "Backups").
 */
import { errorText } from "../core/errors.ts";
import { type BspNode, removeCell } from "../core/geo/mod.ts";
import { CellMsg, type SpaceGeometry } from "../core/wire/mod.ts";
import type { Logger } from "../core/log.ts";
import type { Member } from "./registry.ts";
import type { Space } from "./space.ts";

/** How long a request for a space that lost its only cell waits for the new one. */
export const PLACE_WAIT_MS = 5000;

/** What changing the trees needs of the space table. */
export interface TreeHost {
  /** The live spaces by id. */
  readonly all: ReadonlyMap<number, Space>;
  /** The registered processes by id. */
  readonly members: ReadonlyMap<number, Member>;
  readonly log: Logger;
  /** A space's geometry with the addresses of its cellapps. */
  geometryOf(space: Space): SpaceGeometry;
  /** Forgets what a cell reported and what was spawned into it (the cell is gone). */
  forgetCell(spaceId: number, cellId: number): void;
  /** The `n` best cellapps for new cells (cell_placement.ts). */
  findBestCellApps(n: number, preferredHost: string | null): Member[];
}

/**
 * A cellapp is gone: all its cells go with it. Each is taken out of its
 * space's tree (removeCell): only its neighbours across the partition grow,
 * the other cells keep their rects. A space that lost its only cell keeps
 * its id and its (dead) leaf, marked bare, until giveCellsToBareSpaces puts
 * a new cell on a live cellapp. Returns the spaces left bare.
 */
export function dropCellApp(host: TreeHost, cellapp: number): Space[] {
  const bare: Space[] = [];
  for (const space of [...host.all.values()]) {
    const gone = space.cells().filter((c) => c.cellapp === cellapp);
    if (gone.length === 0) continue;
    for (const c of gone) host.forgetCell(space.id, c.id);
    let tree: BspNode | null = space.tree;
    for (const c of gone) tree = tree && removeCell(tree, c.id);
    if (tree === null) {
      space.bare = true;
      bare.push(space);
      host.log.warn(`space ${space.id} lost its only cellapp ${cellapp}; it gets a new cell on a live cellapp`);
      continue;
    }
    space.tree = tree;
    const g = host.geometryOf(space);
    for (const a of space.cellapps()) host.members.get(a)?.channel.send(CellMsg.updateGeometry, g);
    host.log.warn(
      `space ${space.id} lost ${gone.length} cell(s) with cellapp ${cellapp}; their neighbours took their area`,
    );
  }
  return bare;
}

/**
 * Gives a space a new tree (load balancing moved a partition, added or
 * removed a cell). A cellapp new to the space makes its cell first, so that
 * no neighbour sends it a ghost or an entity before the cell exists; then
 * every cellapp that runs or ran a cell of the space hears the new
 * geometry (a cellapp whose cell left the tree hands its last entities
 * over and drops the cell).
 */
export async function setTree(host: TreeHost, space: Space, tree: BspNode): Promise<void> {
  const before = space.cellapps();
  space.tree = tree;
  const after = space.cellapps();
  const fresh = after.filter((a) => !before.includes(a));
  const g = host.geometryOf(space);
  let failed: Error | null = null;
  if (fresh.length > 0) {
    space.placing = true;
    const made = await Promise.allSettled(fresh.map((a) => {
      const m = host.members.get(a);
      if (!m) throw new Error(`cellapp ${a} is gone`);
      return m.channel.request(CellMsg.createCell, g);
    }));
    space.placing = false;
    if (host.all.get(space.id) !== space || space.tree !== tree) return;
    // A cell that could not be made leaves the tree again (its zero-width leaf or, when it grew, its area goes back).
    made.forEach((r, i) => {
      if (r.status === "fulfilled") return;
      failed = r.reason as Error;
      for (const c of space.cells()) {
        if (c.cellapp === fresh[i]) space.tree = removeCell(space.tree, c.id) ?? space.tree;
      }
    });
  }
  const geometry = space.tree === tree ? g : host.geometryOf(space);
  const now = space.cellapps();
  for (const a of new Set([...before, ...now])) {
    // A new cellapp made its cell from this geometry already.
    if (fresh.includes(a) && geometry === g) continue;
    host.members.get(a)?.channel.send(CellMsg.updateGeometry, geometry);
  }
  for (const c of before) if (!now.includes(c)) host.log.info(`space ${space.id} no longer uses cellapp ${c}`);
  if (failed) {
    throw new Error(`a new cell of space ${space.id} could not be made: ${errorText(failed)}`, {
      cause: failed,
    });
  }
}

/**
 * Every space keeps at least one cell. Each bare space (see
 * dropCellApp) gets one new cell covering it, with a fresh cell id, on
 * the least loaded live cellapp; with no cellapp alive it stays bare until
 * one registers (call again then). Resolves once the cellapps answered; a
 * failure is logged and leaves the space bare for the next call.
 */
export async function giveCellsToBareSpaces(host: TreeHost): Promise<void> {
  const jobs: Promise<void>[] = [];
  for (const space of host.all.values()) {
    if (!space.bare || space.placing) continue;
    const [app] = host.findBestCellApps(1, space.preferredHost);
    if (!app) {
      host.log.warn(`space ${space.id} has no cell: no cellapp is alive to run one`);
      continue;
    }
    const id = Math.max(...space.cells().map((c) => c.id)) + 1;
    space.tree = { cell: { id, cellapp: app.id } };
    space.bare = false;
    space.placing = true;
    jobs.push(
      app.channel.request(CellMsg.createCell, host.geometryOf(space)).then(
        () => {
          space.placing = false;
          host.log.info(`space ${space.id} has a new cell ${id} on cellapp ${app.id}`);
        },
        (e) => {
          space.placing = false;
          if (host.all.get(space.id) !== space) return;
          space.bare = true;
          host.log.error(
            `space ${space.id}: creating its new cell ${id} on cellapp ${app.id} failed: ${errorText(e)}`,
          );
          // That cellapp died meanwhile: try the next one now. One that refused is tried when a cellapp joins or leaves.
          if (!host.members.has(app.id)) return giveCellsToBareSpaces(host);
        },
      ),
    );
  }
  await Promise.all(jobs);
}

/**
 * Resolves once `space` has a cell on a live cellapp again (placing one now if it is bare), or after `ms`: a
 * restore or a login that arrives while its space lost its only cell waits for the new one rather than failing.
 */
export async function placed(host: TreeHost, space: Space, ms: number = PLACE_WAIT_MS): Promise<void> {
  const end = performance.now() + ms;
  while ((space.bare || space.placing) && host.all.get(space.id) === space && performance.now() < end) {
    if (space.bare && !space.placing) await giveCellsToBareSpaces(host);
    if (space.bare || space.placing) await new Promise((r) => setTimeout(r, 50));
  }
}
