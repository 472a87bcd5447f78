import assert from "node:assert/strict";
import { runBots } from "../../client/bots/mod.ts";
import { registry } from "../../entities/mod.ts";
import { Procs } from "../../testing/procs.ts";
import { startBaseProcess, startCluster } from "../helpers/players.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test(
  "bots with a few observers and the peer's walk: all connect, the observers measure latency",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs);
    await startBaseProcess(procs, cluster);
    const log: string[] = [];
    const report = await runBots({
      admin: cluster.admin,
      count: 12,
      duration: 3,
      warmup: 1,
      side: 60,
      propEvery: 0.5,
      observers: 3,
      walk: "peer",
      registry,
      prefix: "observer-bot-",
      log: (line) => log.push(line),
    });
    const why = `${JSON.stringify(report)}\n${log.join("\n")}`;
    assert.equal(report.connected, 12, why);
    assert.equal(report.errors, 0, why);
    assert.equal(report.outOfOrder + report.gaps, 0, why);
    // 11 others moving 10 times a second: at least a few bytes each per move, were the quiet bots sent them.
    assert.ok(report.bytesPerClientPerSec > 11 * 10 * 3, `every bot gets and counts the moves: ${why}`);
    assert.ok(report.movesPerClientPerSec > 7, `the bots send their moves: ${why}`);
    assert.ok(report.latencyP99Ms !== null && report.latencyP99Ms < 1000, `the observers saw moves: ${why}`);
    // 12 bots moving 10 times a second, all in view: 3 observers see 3 × 11 × 10 moves a second, about 27 per bot;
    // were all 12 watching, it would be about 110. Yet every bot gets the moves: bytes as a watching client's.
    assert.ok(report.updatesPerClientPerSec > 5 && report.updatesPerClientPerSec < 60, `only observers decode: ${why}`);
  },
);
