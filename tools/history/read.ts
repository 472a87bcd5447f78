/** Reads the claim logs a run wrote with --history (core/history.ts): one file per process. */
import { errorText } from "../../core/errors.ts";
import type { HistoryRecord } from "../../core/history.ts";

/** The claim log of one process. */
export interface ProcessLog {
  /** The file it came from. */
  file: string;
  role: string;
  pid: number;
  /** Its lines in the order written (their times do not go back). */
  records: HistoryRecord[];
}

/** A claim log that cannot be read: which file, which line, and why. */
export class HistoryReadError extends Error {
  override name = "HistoryReadError";
}

const KINDS = new Set(["open", "close", "beat", "hold", "unhold", "real", "unreal", "base", "unbase"]);

/**
 * Parses one process's log. A last line without its newline is what a process killed mid-write left: it is
 * dropped. Any other line that is not a claim record is an error naming the file and line.
 */
export function parseHistory(file: string, text: string): ProcessLog {
  const lines = text.split("\n");
  const torn = lines.pop() ?? ""; // "" when the text ends with a newline
  const records: HistoryRecord[] = [];
  let last = -Infinity;
  lines.forEach((line, i) => {
    if (line === "") return;
    let r: HistoryRecord;
    try {
      r = JSON.parse(line);
    } catch (e) {
      throw new HistoryReadError(`${file}:${i + 1}: not JSON: ${line.slice(0, 80)}`, { cause: e });
    }
    if (typeof r !== "object" || r === null || typeof r.t !== "number" || !KINDS.has(r.k)) {
      throw new HistoryReadError(`${file}:${i + 1}: not a claim record: ${line.slice(0, 80)}`);
    }
    if (r.t < last) throw new HistoryReadError(`${file}:${i + 1}: time ${r.t} goes back from ${last}`);
    last = r.t;
    records.push(r);
  });
  void torn;
  const open = records[0];
  if (open?.k !== "open") throw new HistoryReadError(`${file}: does not start with an "open" record`);
  return { file, role: open.role, pid: open.pid, records };
}

/** Reads every `*.jsonl` claim log in `dir`. */
export async function readHistory(dir: string): Promise<ProcessLog[]> {
  const logs: ProcessLog[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.isFile || !entry.name.endsWith(".jsonl")) continue;
    const file = `${dir}/${entry.name}`;
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch (e) {
      throw new HistoryReadError(`cannot read claim log ${file}: ${errorText(e)}`, { cause: e });
    }
    logs.push(parseHistory(file, text));
  }
  return logs.sort((a, b) => a.file.localeCompare(b.file));
}
