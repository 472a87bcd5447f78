/** A position or direction as scripts read and write it. */
export interface Vec3 {
  x: number;
  y: number;
  z: number;
}
