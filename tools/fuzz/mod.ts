/** Seeded fuzzers for the process ports and the client endpoint, shared by the fuzz test and `deno task bench fuzz`. */
export { fuzzWirePort, type WireFuzzOptions, type WireFuzzReport } from "./wire.ts";
export { type ClientFuzzOptions, type ClientFuzzReport, fuzzClientPort } from "./client.ts";
export { mutateBytes, mutateValue, randomValue, type Rng, rng } from "./random.ts";
export { type FuzzRunOptions, type FuzzRunReport, type FuzzTarget, type FuzzTotals, rssOf, runFuzz } from "./run.ts";
