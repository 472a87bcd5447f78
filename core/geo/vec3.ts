/** A position or direction as scripts read and write it. */
export interface Vec3 {
  /** East-west (m). */
  x: number;
  /** Up (m). */
  y: number;
  /** North-south (m). */
  z: number;
}
