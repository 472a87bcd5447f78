/**
 * What tests and benchmarks share: real processes (procs.ts), test hosts on network namespaces (hosts.ts,
 * hosts_cluster.ts, hosts_forward.ts), a PostgreSQL server (postgres.ts), cells in one process (two_cells.ts,
 * lone_cell.ts), the Prometheus text parser, waiting for conditions, and a logger that keeps its lines. What only
 * tests use stays in tests/helpers/. The walkers test game (games/walkers.ts) is loaded by path with --game, and
 * forward_agent.ts runs as a process of its own; neither is exported here.
 */
export * from "./hosts.ts";
export * from "./hosts_cluster.ts";
export * from "./hosts_forward.ts";
export * from "./procs.ts";
export * from "./postgres.ts";
export * from "./prom_text.ts";
export * from "./wait.ts";
export * from "./two_cells.ts";
export * from "./route.ts";
export * from "./log.ts";
export * from "./lone_cell.ts";
