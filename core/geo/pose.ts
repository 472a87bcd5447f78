/**
 * A pose: where an entity is (x, y, z) and which way it faces (yaw, pitch, roll). One record carries it across every
 * hop of a client's move and of the AoI protocol, in place of six loose numbers; an entity that has these six fields
 * is a Pose itself, so a hot path passes the entity and allocates nothing.
 */

/** Position and direction (radians). */
export interface Pose {
  readonly x: number;
  readonly y: number;
  readonly z: number;
  readonly yaw: number;
  readonly pitch: number;
  readonly roll: number;
}

/** A pose that a reader fills in place (one per reader, reused: whoever keeps it copies it with `copyPose`). */
export interface MutablePose {
  x: number;
  y: number;
  z: number;
  yaw: number;
  pitch: number;
  roll: number;
}

/** A new pose, by default at the origin facing yaw 0. */
export function makePose(x = 0, y = 0, z = 0, yaw = 0, pitch = 0, roll = 0): MutablePose {
  return { x, y, z, yaw, pitch, roll };
}

/** A copy of `p` that later changes to `p` do not reach. */
export function copyPose(p: Pose): MutablePose {
  return { x: p.x, y: p.y, z: p.z, yaw: p.yaw, pitch: p.pitch, roll: p.roll };
}

/** Writes a whole pose into `p`, in place: for a pose reused on a hot path instead of a new one each time. */
export function setPose(
  p: MutablePose,
  x: number,
  y: number,
  z: number,
  yaw: number,
  pitch: number,
  roll: number,
): MutablePose {
  p.x = x;
  p.y = y;
  p.z = z;
  p.yaw = yaw;
  p.pitch = pitch;
  p.roll = roll;
  return p;
}

/** The position of `p` as [x, y, z]. */
export function posePosition(p: Pose): [number, number, number] {
  return [p.x, p.y, p.z];
}

/** The direction of `p` as [yaw, pitch, roll]. */
export function poseDirection(p: Pose): [number, number, number] {
  return [p.yaw, p.pitch, p.roll];
}

/** The pose of a position and a direction given as [x, y, z] and [yaw, pitch, roll]. */
export function poseOf(position: readonly number[], direction: readonly number[]): MutablePose {
  return {
    x: position[0],
    y: position[1],
    z: position[2],
    yaw: direction[0],
    pitch: direction[1],
    roll: direction[2],
  };
}
