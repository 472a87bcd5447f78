/**
 * The history checker: reads the claim logs a run wrote with --history (core/history.ts) and reports entities
 * real in two places at once, accounts with two bases at once, and what a fault lost. For tests and benchmarks.
 */
export { HistoryReadError, parseHistory, type ProcessLog, readHistory } from "./read.ts";
export {
  checkHistory,
  type CheckOptions,
  type Claim,
  claimsOf,
  formatReport,
  type HistoryReport,
  type Lost,
  type Overlap,
} from "./check.ts";
export { intersect, length, type Spans, subtract } from "./spans.ts";
