/** Geometry shared by every role and the client: rects, the BSP tree of cells. */
export * from "./rect.ts";
export * from "./bsp.ts";
export * from "./packed.ts";
export * from "./pose.ts";
export * from "./vec3.ts";
