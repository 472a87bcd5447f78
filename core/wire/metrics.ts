/**
 * What a process answers the cellappmgr's metrics request with (prom-client's
 * JSON shape, trimmed), and the check of that answer: it comes from another
 * process, so its size and every name in it are bounded before the
 * cellappmgr renders it.
 */
import { type Check, oneOf, str } from "./check.ts";

/** One sample: a value with its labels; histograms name the series (`x_bucket`, `x_sum`, `x_count`). */
export interface MetricSample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** One metric family. */
export interface MetricFamily {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram" | "summary";
  values: MetricSample[];
}

/** Most families one process may answer with. */
export const MAX_FAMILIES = 256;
/** Most samples one process may answer with, over all its families. */
export const MAX_SAMPLES = 50_000;
/** Most labels on one sample. */
export const MAX_LABELS = 8;
/** Labels the cellappmgr adds to every sample: a process may not set them. */
export const PROCESS_LABELS: readonly string[] = ["role", "process"];

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]{0,199}$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]{0,99}$/;
const SUFFIXES: Record<string, readonly string[]> = {
  counter: [""],
  gauge: [""],
  histogram: ["_bucket", "_sum", "_count"],
  summary: ["", "_sum", "_count"],
};
const help = str(1000);
const type = oneOf("counter", "gauge", "histogram", "summary");

function labelsWhy(v: unknown): string | null {
  if (typeof v !== "object" || v === null || Array.isArray(v) || v instanceof Uint8Array) {
    return "labels: not an object";
  }
  const keys = Object.keys(v);
  if (keys.length > MAX_LABELS) return `more than ${MAX_LABELS} labels`;
  for (const k of keys) {
    if (!LABEL_NAME.test(k) || k.startsWith("__")) return `label name ${JSON.stringify(k.slice(0, 40))} is not valid`;
    if (PROCESS_LABELS.includes(k)) return `label "${k}" is the cellappmgr's to set`;
    const x = (v as Record<string, unknown>)[k];
    const ok = typeof x === "number" ? Number.isFinite(x) : typeof x === "string" && x.length <= 256;
    if (!ok) return `label "${k}": expected a finite number or a string of at most 256 characters`;
  }
  return null;
}

/** Checks a process's metrics answer: shapes, names, and at most MAX_FAMILIES families and MAX_SAMPLES samples. */
export const checkMetricFamilies: Check = (v) => {
  if (!Array.isArray(v)) return "expected an array of metric families";
  if (v.length > MAX_FAMILIES) return `${v.length} metric families; at most ${MAX_FAMILIES} are taken`;
  let samples = 0;
  for (let i = 0; i < v.length; i++) {
    const f = v[i] as Record<string, unknown>;
    if (typeof f !== "object" || f === null || Array.isArray(f)) return `family ${i}: not an object`;
    for (const k of Object.keys(f)) {
      if (!["name", "help", "type", "values"].includes(k)) return `family ${i}: unexpected field "${k}"`;
    }
    if (typeof f.name !== "string" || !METRIC_NAME.test(f.name)) return `family ${i}: the name is not a metric name`;
    const why = help(f.help) ?? type(f.type);
    if (why) return `family ${f.name}: ${why}`;
    if (!Array.isArray(f.values)) return `family ${f.name}: values is not an array`;
    samples += f.values.length;
    if (samples > MAX_SAMPLES) return `more than ${MAX_SAMPLES} samples`;
    const names = SUFFIXES[f.type as string].map((s) => f.name + s);
    for (const s of f.values as Record<string, unknown>[]) {
      if (typeof s !== "object" || s === null || Array.isArray(s)) return `family ${f.name}: a sample is not an object`;
      for (const k of Object.keys(s)) {
        if (k !== "labels" && k !== "value" && k !== "metricName") {
          return `family ${f.name}: unexpected sample field "${k}"`;
        }
      }
      if (typeof s.value !== "number") return `family ${f.name}: a value is not a number`;
      const series = s.metricName ?? f.name;
      if (typeof series !== "string" || !names.includes(series)) {
        return `family ${f.name}: series ${JSON.stringify(String(series).slice(0, 60))} does not belong to it`;
      }
      const bad = labelsWhy(s.labels);
      if (bad) return `family ${f.name}: ${bad}`;
    }
  }
  return null;
};
