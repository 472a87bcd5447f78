import type { Logger, LogLevel } from "../core/log.ts";

/** A logger that keeps its lines so a test can assert on what was logged. */
export function memoryLogger(): Logger & {
  lines: string[];
  waitFor(re: RegExp, ms?: number): Promise<string>;
} {
  const lines: string[] = [];
  const make = (tag: string): Logger => {
    const w = (lvl: LogLevel) => (m: string) => void lines.push(`${lvl} ${tag} ${m}`);
    return {
      level: "debug",
      debug: w("debug"),
      info: w("info"),
      warn: w("warn"),
      error: w("error"),
      child: (t) => make(`${tag} ${t}`),
    };
  };
  const base = make("test");
  return {
    ...base,
    lines,
    async waitFor(re: RegExp, ms = 3000): Promise<string> {
      const deadline = Date.now() + ms;
      while (Date.now() < deadline) {
        const hit = lines.find((l) => re.test(l));
        if (hit) return hit;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(
        `no log line matched ${re} within ${ms} ms; lines:\n${lines.join("\n")}`,
      );
    },
  };
}
