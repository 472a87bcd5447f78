/**
 * Where an entity keeps its position, direction and the flags witnesses read: its row in the process's array of
 * entity rows (cell/witness/entity_rows.ts, docs/architecture.md "The witness"), which the witnesses that send it
 * read without touching the entity object. The fields are accessors over the row, so the row is never stale.
 */
import type { Pose } from "./pose.ts";
import {
  allocRow,
  R_DESTROYED,
  R_ON_GROUND,
  R_PITCH,
  R_ROLL,
  R_STATE,
  R_X,
  R_Y,
  R_YAW,
  R_Z,
  rows,
  setRowBit,
} from "./witness/entity_rows.ts";

/** An entity's pose and state bits, kept in its row; `Entity` extends it. */
export class EntityPose implements Pose {
  /** Its row, freed when the entity is collected. */
  readonly row: number = allocRow(this);

  get x(): number {
    return rows.a[this.row + R_X];
  }
  set x(v: number) {
    rows.a[this.row + R_X] = v;
  }
  get y(): number {
    return rows.a[this.row + R_Y];
  }
  set y(v: number) {
    rows.a[this.row + R_Y] = v;
  }
  get z(): number {
    return rows.a[this.row + R_Z];
  }
  set z(v: number) {
    rows.a[this.row + R_Z] = v;
  }
  get yaw(): number {
    return rows.a[this.row + R_YAW];
  }
  set yaw(v: number) {
    rows.a[this.row + R_YAW] = v;
  }
  get pitch(): number {
    return rows.a[this.row + R_PITCH];
  }
  set pitch(v: number) {
    rows.a[this.row + R_PITCH] = v;
  }
  get roll(): number {
    return rows.a[this.row + R_ROLL];
  }
  set roll(v: number) {
    rows.a[this.row + R_ROLL] = v;
  }
  /** On the ground (volatile positions go as PackedXZ) or not. */
  get isOnGround(): boolean {
    return (rows.a[this.row + R_STATE] & R_ON_GROUND) !== 0;
  }
  set isOnGround(v: boolean) {
    setRowBit(this.row, R_ON_GROUND, v);
  }
  get destroyed(): boolean {
    return (rows.a[this.row + R_STATE] & R_DESTROYED) !== 0;
  }
  set destroyed(v: boolean) {
    setRowBit(this.row, R_DESTROYED, v);
  }
}
