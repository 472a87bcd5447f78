/** Load-generating bots (`deno task bots`, benchmarks): bots that log in, walk and measure what clients see. */
export { type BotOptions, type BotReport, runBots } from "./bot_runner.ts";
export { type BotTotals, LatencyHistogram, MoveLog, Observer } from "./bot_stats.ts";
export { MoveClock, type WalkArea, Walker } from "./bot_walk.ts";
