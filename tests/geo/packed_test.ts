import assert from "node:assert/strict";
import { packAngle, PACKED_XZ_LIMIT, packXYZ, packXZ, unpackAngle, unpackXYZ, unpackXZ } from "../../core/geo/mod.ts";

Deno.test("PackedXZ: zero is exact, signs kept, error within half a mantissa step of |v|+2", () => {
  assert.deepEqual(unpackXZ(packXZ(0, 0)), [0, 0]);
  for (const scale of [1, 0.25, 2]) {
    for (let v = -509 * scale; v <= 509 * scale; v += 0.37 * scale) {
      const p = packXZ(v, -v / 2, scale);
      assert.ok(p >= 0 && p < 1 << 24, `${v} packs into 24 bits`);
      const [x, z] = unpackXZ(p, scale);
      const tol = (a: number) => ((Math.abs(a) / scale + 2) / 512) * scale + 1e-9;
      assert.ok(Math.abs(x - v) <= tol(v), `x ${v} -> ${x} at scale ${scale}`);
      assert.ok(Math.abs(z + v / 2) <= tol(v / 2), `z ${-v / 2} -> ${z}`);
      if (v !== 0) assert.equal(Math.sign(x), Math.sign(v));
    }
  }
  // Near the reference the steps are centimetres; at the edge of the range about a metre.
  assert.ok(Math.abs(unpackXZ(packXZ(1.234, 0))[0] - 1.234) < 0.01);
  assert.ok(Math.abs(unpackXZ(packXZ(400.4, 0))[0] - 400.4) <= 0.5);
});

Deno.test("PackedXZ: the fit boundary (doesn't fit -> -1, the caller sends a full position)", () => {
  const lim = PACKED_XZ_LIMIT;
  assert.ok(packXZ(lim - 0.01, 0) >= 0);
  assert.ok(packXZ(-(lim - 0.01), 0) >= 0);
  assert.equal(packXZ(lim, 0), -1);
  assert.equal(packXZ(0, -lim), -1);
  assert.equal(packXZ(1e6, 0), -1);
  assert.equal(packXZ(NaN, 0), -1);
  // The scale stretches the range.
  assert.equal(packXZ(600, 0, 1), -1);
  assert.ok(packXZ(600, 0, 2) >= 0);
  assert.ok(Math.abs(unpackXZ(packXZ(lim - 0.01, 0))[0] - 509) <= 0.5);
});

Deno.test("PackedXYZ: Y has 12 mantissa bits, all three axes must fit", () => {
  const p = packXYZ(12.5, -3.21, 100, 1)!;
  const [x, y, z] = unpackXYZ(p[0], p[1], 1);
  assert.ok(Math.abs(x - 12.5) < 0.04 && Math.abs(z - 100) < 0.26);
  assert.ok(Math.abs(y + 3.21) < 0.001, `y ${y}`);
  assert.ok(p[1] < 1 << 16);
  assert.equal(packXYZ(0, 600, 0), null);
  assert.equal(packXYZ(0, 0, -600), null);
});

Deno.test("angles pack into int8 with wrap-around and ~0.0123 rad error", () => {
  for (let a = -10; a <= 10; a += 0.013) {
    const i = packAngle(a);
    assert.ok(i >= -128 && i <= 127, `${a} -> ${i}`);
    const back = unpackAngle(i);
    let d = Math.abs(back - a) % (2 * Math.PI);
    d = Math.min(d, 2 * Math.PI - d);
    assert.ok(d <= Math.PI / 256 + 1e-9, `${a} -> ${back}`);
  }
  assert.equal(packAngle(0), 0);
  assert.equal(packAngle(Math.PI), -128, "pi wraps to -pi");
  assert.equal(packAngle(-Math.PI), -128);
  assert.equal(packAngle(Math.PI / 2), 64);
});
