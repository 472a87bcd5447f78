/** Writes one benchmark's figures into bench/RESULTS.md, replacing its earlier section. */
export async function writeResults(
  name: string,
  markdown: string,
): Promise<void> {
  const path = new URL("./RESULTS.md", import.meta.url);
  let text = "";
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    text = "# Benchmark results\n\nEach section is written by `deno task bench NAME`.\n";
  }
  const begin = `<!-- bench:${name}:begin -->`;
  const end = `<!-- bench:${name}:end -->`;
  const section = `${begin}\n## ${name}\n\n${machineLine()}\n\n${markdown.trim()}\n${end}`;
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  text = from >= 0 && to > from
    ? text.slice(0, from) + section + text.slice(to + end.length)
    : `${text.trimEnd()}\n\n${section}\n`;
  await Deno.writeTextFile(path, text);
}

/** One line naming the machine, the runtime and the date, for a results section. */
export function machineLine(): string {
  const cpu = cpuModel();
  return `Machine: ${cpu}, ${navigator.hardwareConcurrency} cores, ${
    Math.round(Deno.systemMemoryInfo().total / 2 ** 30)
  } GiB, ${Deno.build.os}/${Deno.build.arch}; Deno ${Deno.version.deno}; date ${
    new Date().toISOString().slice(0, 10)
  }.`;
}

function cpuModel(): string {
  try {
    const info = Deno.readTextFileSync("/proc/cpuinfo");
    const m = info.match(/^model name\s*:\s*(.+)$/m);
    return m ? m[1].trim() : "unknown CPU";
  } catch {
    return "unknown CPU";
  }
}
