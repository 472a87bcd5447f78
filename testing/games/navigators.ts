/**
 * A test game (run with --game): Navigators navigate to (toX, toZ) on their space's navigation mesh and say how it went
 * in their properties, which GET /api/entities/:id shows: `arrived`, `failure` (the reason onMoveFailed gave), and
 * `wallTicks`, the ticks they spent inside the wall of tests/fixtures/nav/wall.obj (x 78..82, z 0..70). Every space
 * but the default one gets that OBJ as its geometry, through the game's spaceGeometry hook.
 */
import { fileURLToPath } from "node:url";
import { CellScript } from "../../core/script.ts";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import { defineGame } from "../../core/game.ts";

/** The test geometry: a floor 200 × 100 m with a wall across it. */
export const WALL_OBJ: string = fileURLToPath(new URL("../../tests/fixtures/nav/wall.obj", import.meta.url));

/** A navigator: where it goes and how fast, and how it went. */
export const Navigator = defineEntity({
  name: "Navigator",
  hasBase: false,
  hasCell: true,
  properties: {
    toX: { type: T.FLOAT32, flags: "CELL_PRIVATE" },
    toZ: { type: T.FLOAT32, flags: "CELL_PRIVATE" },
    speed: { type: T.FLOAT32, flags: "CELL_PRIVATE", default: 10 },
    arrived: { type: T.UINT8, flags: "CELL_PRIVATE" },
    failure: { type: T.STRING, flags: "CELL_PRIVATE" },
    wallTicks: { type: T.UINT32, flags: "CELL_PRIVATE" },
  },
});

type NavigatorProps = {
  toX: number;
  toZ: number;
  speed: number;
  arrived: number;
  failure: string;
  wallTicks: number;
};

/** Navigates once, when created; a restored one goes on with the walk its backup had. */
class NavigatorCell extends CellScript<NavigatorProps> {
  override onCreated(): void {
    const { toX, toZ, speed } = this.self.props;
    this.self.navigate({ x: toX, y: 0, z: toZ }, speed);
  }
  override onMove(): void {
    this.self.props.arrived = 1;
  }
  override onMoveFailed(_id: number, reason: string): void {
    this.self.props.failure = reason;
  }
  override onTick(): void {
    const { x, z } = this.self.position;
    if (x > 78 && x < 82 && z > 0 && z < 70) this.self.props.wallTicks++;
  }
}

/** The game. */
export const game = defineGame({
  name: "navigators",
  registry: createRegistry({ entities: [Navigator] }),
  cellScripts: { Navigator: NavigatorCell },
  spaceGeometry: ({ isDefault }) => isDefault ? null : WALL_OBJ,
});
