/**
 * The busy share is a whole process's CPU time over wall time, so it is
 * measured in a process of its own: tests running in parallel share this one.
 */
import assert from "node:assert/strict";

const BUSY = new URL("../../core/busy.ts", import.meta.url).href;

/** Runs `body` in a fresh Deno process with `meter` and `spin` in scope; returns what it printed as JSON. */
async function measure(body: string): Promise<number[]> {
  const script = `import { BusyMeter } from ${JSON.stringify(BUSY)};
const spin = (ms) => { const end = performance.now() + ms; while (performance.now() < end) {} };
const idle = (ms) => new Promise((r) => setTimeout(r, ms));
const out = [];
${body}
console.log(JSON.stringify(out));`;
  const run = await new Deno.Command(Deno.execPath(), { args: ["eval", script], stdout: "piped", stderr: "piped" })
    .output();
  assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
  return JSON.parse(new TextDecoder().decode(run.stdout));
}

Deno.test("the busy share follows what the process does between samples, not only one loop", async () => {
  const [busy, idle, again] = await measure(`
const meter = new BusyMeter(1);
spin(300); out.push(meter.sample());
await idle(300); out.push(meter.sample());
out.push(meter.sample());`);
  // On a loaded machine the spinning process gets less than a core: busy is a share of wall time, not of the loop.
  assert.ok(busy > 0.15, `a spinning process is busy: ${busy}`);
  assert.ok(idle < 0.3 && idle * 3 < busy, `a waiting process is idle: ${idle} against ${busy}`);
  assert.equal(again, idle, "a sample too soon after the last keeps its figure");
});

Deno.test("smoothing weighs each new sample", async () => {
  const [busy, half] = await measure(`
const meter = new BusyMeter(0.5);
spin(300); out.push(meter.sample());
await idle(300); out.push(meter.sample());`);
  assert.ok(Math.abs(half - busy / 2) < 0.15, `an idle sample halves the figure: ${busy} then ${half}`);
});
