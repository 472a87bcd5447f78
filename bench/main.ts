/**
 * `deno task bench NAME [args]`: runs bench/NAME.ts, which measures and writes
 * its figures into bench/RESULTS.md.
 */
const [name, ...rest] = Deno.args;
const dir = new URL("./", import.meta.url);
const available: string[] = [];
for await (const e of Deno.readDir(dir)) {
  // Peers a benchmark starts, and shared modules, are not benchmarks.
  const helper = e.name.endsWith("_peer.ts") || ["main.ts", "results.ts"].includes(e.name);
  if (e.isFile && e.name.endsWith(".ts") && !helper) {
    available.push(e.name.slice(0, -3));
  }
}
available.sort();
if (!name || !available.includes(name)) {
  console.error(
    `${name ? `unknown benchmark "${name}"` : "no benchmark named"}; available: ${available.join(", ")}`,
  );
  Deno.exit(2);
}
const mod = await import(new URL(`./${name}.ts`, dir).href);
await mod.run(rest);
