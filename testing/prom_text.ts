/**
 * A strict parser of the Prometheus text exposition format (0.0.4), for
 * tests: it throws, naming the line, on anything a Prometheus server would
 * refuse, and checks that histograms are whole (cumulative buckets ending in
 * +Inf equal to the count).
 */

/** One sample line. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A parsed scrape. */
export interface PromText {
  /** Family name to its TYPE. */
  types: Map<string, string>;
  help: Map<string, string>;
  samples: PromSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function parseValue(s: string, where: string): number {
  if (s === "+Inf") return Infinity;
  if (s === "-Inf") return -Infinity;
  if (s === "NaN") return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) throw new Error(`${where}: ${JSON.stringify(s)} is no value`);
  return Number(s);
}

function parseLabels(s: string, where: string): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < s.length) {
    const eq = s.indexOf("=", i);
    if (eq < 0) throw new Error(`${where}: a label without =`);
    const name = s.slice(i, eq).trim();
    if (!LABEL.test(name)) throw new Error(`${where}: bad label name ${JSON.stringify(name)}`);
    if (name in out) throw new Error(`${where}: label ${name} twice`);
    if (s[eq + 1] !== '"') throw new Error(`${where}: label ${name} not quoted`);
    let v = "";
    let j = eq + 2;
    for (; j < s.length && s[j] !== '"'; j++) {
      if (s[j] === "\\") {
        const n = s[++j];
        if (n === "n") v += "\n";
        else if (n === "\\" || n === '"') v += n;
        else throw new Error(`${where}: bad escape \\${n}`);
      } else v += s[j];
    }
    if (j >= s.length) throw new Error(`${where}: unterminated label ${name}`);
    out[name] = v;
    i = j + 1;
    if (s[i] === ",") i++;
    else if (i < s.length) throw new Error(`${where}: expected , after label ${name}`);
  }
  return out;
}

/** The family a sample name belongs to, given the declared types. */
export function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  return m && ["histogram", "summary"].includes(types.get(m[1]) ?? "") ? m[1] : undefined;
}

/** Parses `text`; throws on the first line a Prometheus server would refuse. */
export function parsePromText(text: string): PromText {
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  const samples: PromSample[] = [];
  const lines = text.split("\n");
  if (lines.at(-1) !== "") throw new Error("the text does not end with a newline");
  lines.forEach((line, n) => {
    const where = `line ${n + 1}`;
    if (line.trim() === "") return;
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) return; // a comment
      if (!NAME.test(m[2])) throw new Error(`${where}: bad metric name ${m[2]}`);
      if (m[1] === "TYPE") {
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(m[3])) {
          throw new Error(`${where}: bad type ${m[3]}`);
        }
        if (types.has(m[2])) throw new Error(`${where}: a second TYPE for ${m[2]}`);
        types.set(m[2], m[3]);
      } else help.set(m[2], m[3]);
      return;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: -?\d+)?$/.exec(line);
    if (!m) throw new Error(`${where}: not a sample: ${line.slice(0, 120)}`);
    if (familyOf(m[1], types) === undefined) throw new Error(`${where}: ${m[1]} has no TYPE before it`);
    samples.push({ name: m[1], labels: parseLabels(m[2] ?? "", where), value: parseValue(m[3], where) });
  });
  checkHistograms(types, samples);
  return { types, help, samples };
}

function checkHistograms(types: Map<string, string>, samples: PromSample[]): void {
  for (const [name, type] of types) {
    if (type !== "histogram") continue;
    const series = new Map<string, { buckets: [number, number][]; count?: number }>();
    const keyOf = (l: Record<string, string>) =>
      JSON.stringify(Object.entries(l).filter(([k]) => k !== "le").sort(([a], [b]) => a.localeCompare(b)));
    for (const s of samples) {
      if (familyOf(s.name, types) !== name) continue;
      const key = keyOf(s.labels);
      const entry = series.get(key) ?? { buckets: [] };
      series.set(key, entry);
      if (s.name === `${name}_bucket`) entry.buckets.push([parseValue(s.labels.le, name), s.value]);
      if (s.name === `${name}_count`) entry.count = s.value;
    }
    for (const [key, { buckets, count }] of series) {
      buckets.sort((a, b) => a[0] - b[0]);
      if (buckets.at(-1)?.[0] !== Infinity) throw new Error(`${name}${key}: no +Inf bucket`);
      for (let i = 1; i < buckets.length; i++) {
        if (buckets[i][1] < buckets[i - 1][1]) throw new Error(`${name}${key}: buckets are not cumulative`);
      }
      if (buckets.at(-1)![1] !== count) throw new Error(`${name}${key}: +Inf bucket ${buckets.at(-1)![1]} != ${count}`);
    }
  }
}

/** The samples named `name` whose labels include `labels`. */
export function samplesOf(p: PromText, name: string, labels: Record<string, string> = {}): PromSample[] {
  return p.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The one sample named `name` with `labels`; throws when there is none or several. */
export function valueOf(p: PromText, name: string, labels: Record<string, string> = {}): number {
  const got = samplesOf(p, name, labels);
  if (got.length !== 1) throw new Error(`${got.length} samples of ${name} ${JSON.stringify(labels)}`);
  return got[0].value;
}
