/**
 * Test helper: a strict reader of the Prometheus text exposition format
 * (version 0.0.4, what prom-client serves and Prometheus scrapes), with
 * look-ups by series name and labels.
 *
 * Why not a library: prom-client has no parser (reading its output back
 * through its own objects would prove nothing about the text), and the one
 * npm parser in wide use, parse-prometheus-text-format (unmaintained), drops
 * `_sum`/`_count` and merges the buckets of histograms that carry labels other
 * than `le` — every histogram here carries `service`. The official parser is
 * Go (promtool, whose Debian package is ~100 MB); this reader applies the same
 * rules: line grammar, escapes, Go float syntax for values, HELP/TYPE at most
 * once and before the family's samples, a family's samples not interleaved
 * with another's, no duplicate series, histogram buckets cumulative with a
 * +Inf bucket equal to `_count`.
 */

export type Labels = Readonly<Record<string, string>>;

export type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped";

export interface Sample {
  /** The sample's own name (`x_bucket`, `x_sum`, ... for histograms). */
  readonly name: string;
  readonly labels: Labels;
  readonly value: number;
}

export interface MetricFamily {
  readonly name: string;
  readonly type: MetricType;
  readonly help: string | undefined;
  readonly samples: readonly Sample[];
}

export interface MetricsText {
  readonly families: readonly MetricFamily[];
  family(name: string): MetricFamily | undefined;
  /** Samples named exactly `sampleName` whose labels include `labels`. */
  samples(sampleName: string, labels?: Labels): Sample[];
  /** Sum of the matching samples' values; undefined when none matches. */
  value(sampleName: string, labels?: Labels): number | undefined;
  /** Observations of histogram `name` (sum of the matching `_count` samples); undefined when none matches. */
  histogramCount(name: string, labels?: Labels): number | undefined;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES = new Set<MetricType>(["counter", "gauge", "histogram", "summary", "untyped"]);

class TextFormatError extends Error {
  override readonly name = "TextFormatError";
  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
  }
}

/** A value as Prometheus reads it (Go's ParseFloat: NaN and [+-]Inf/Infinity in any case). */
function parseValue(text: string, line: number): number {
  const special = /^([+-]?)(inf|infinity|nan)$/i.exec(text);
  if (special) return special[2]!.toLowerCase() === "nan" ? Number.NaN : special[1] === "-" ? -Infinity : Infinity;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new TextFormatError(line, `${JSON.stringify(text)} is not a sample value`);
  return Number(text);
}

function parseLabels(text: string, line: number): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let s = text.slice(1);
  for (;;) {
    s = s.trimStart();
    if (s.startsWith("}")) return { labels, rest: s.slice(1) };
    const name = LABEL_NAME.exec(s)?.[0];
    if (name === undefined) throw new TextFormatError(line, "bad label name");
    if (name in labels) throw new TextFormatError(line, `label ${name} twice`);
    s = s.slice(name.length).trimStart();
    if (!s.startsWith('="')) throw new TextFormatError(line, `label ${name}: expected ="`);
    s = s.slice(2);
    let value = "";
    for (;;) {
      const c = s[0];
      if (c === undefined) throw new TextFormatError(line, `label ${name}: unterminated value`);
      s = s.slice(1);
      if (c === '"') break;
      if (c !== "\\") {
        value += c;
        continue;
      }
      const escaped = s[0];
      s = s.slice(1);
      if (escaped === "\\" || escaped === '"') value += escaped;
      else if (escaped === "n") value += "\n";
      else throw new TextFormatError(line, `label ${name}: bad escape \\${escaped ?? ""}`);
    }
    labels[name] = value;
    s = s.trimStart();
    if (s.startsWith(",")) s = s.slice(1);
    else if (!s.startsWith("}")) throw new TextFormatError(line, "expected , or } after a label");
  }
}

/** The family a sample name belongs to, given the families declared so far. */
function familyOf(sampleName: string, declared: ReadonlyMap<string, { type: MetricType | undefined }>): string {
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!sampleName.endsWith(suffix)) continue;
    const base = sampleName.slice(0, -suffix.length);
    const type = declared.get(base)?.type;
    if (type === "histogram" || (type === "summary" && suffix !== "_bucket")) return base;
  }
  return sampleName;
}

interface Building {
  name: string;
  type: MetricType | undefined;
  help: string | undefined;
  samples: Sample[];
}

function checkHistogram(family: MetricFamily): void {
  const series = new Map<string, { buckets: Array<[number, number]>; count: number | undefined }>();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = series.get(key) ?? { buckets: [], count: undefined };
    series.set(key, entry);
    if (s.name === `${family.name}_bucket`) {
      if (le === undefined) throw new Error(`${family.name}: bucket without le`);
      entry.buckets.push([parseValue(le, 0), s.value]);
    } else if (s.name === `${family.name}_count`) {
      entry.count = s.value;
    } else if (s.name !== `${family.name}_sum`) {
      throw new Error(`${family.name}: unexpected sample ${s.name} in a histogram`);
    }
  }
  for (const { buckets, count } of series.values()) {
    buckets.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < buckets.length; i++) {
      if (buckets[i]![1] < buckets[i - 1]![1]) throw new Error(`${family.name}: bucket counts are not cumulative`);
    }
    const inf = buckets.at(-1);
    if (inf === undefined || inf[0] !== Infinity) throw new Error(`${family.name}: histogram without a +Inf bucket`);
    if (count !== inf[1]) throw new Error(`${family.name}: _count ${count} differs from the +Inf bucket ${inf[1]}`);
  }
}

/** Reads (and checks) a /metrics body; throws on anything that is not valid Prometheus text. */
export function parseMetricsText(text: string): MetricsText {
  const declared = new Map<string, Building>();
  const finished = new Set<string>();
  const seenSeries = new Set<string>();
  let current: Building | undefined;
  const enter = (name: string, line: number): Building => {
    if (current?.name === name) return current;
    if (current !== undefined) finished.add(current.name);
    if (finished.has(name)) throw new TextFormatError(line, `family ${name} continues after another family`);
    const family = declared.get(name) ?? { name, type: undefined, help: undefined, samples: [] };
    declared.set(name, family);
    current = family;
    return family;
  };

  text.split("\n").forEach((raw, index) => {
    const line = index + 1;
    const content = raw.trim();
    if (content === "") return;
    if (content.startsWith("#")) {
      const meta = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(content);
      if (!meta) return; // a plain comment
      const [, keyword, name = "", rest = ""] = meta;
      if (METRIC_NAME.exec(name)?.[0] !== name) throw new TextFormatError(line, `bad metric name ${JSON.stringify(name)}`);
      const family = enter(name, line);
      if (family.samples.length > 0) throw new TextFormatError(line, `${keyword} of ${name} after its samples`);
      if (keyword === "HELP") {
        if (family.help !== undefined) throw new TextFormatError(line, `second HELP for ${name}`);
        family.help = rest.replace(/\\(\\|n)/g, (_m, c: string) => (c === "n" ? "\n" : "\\"));
      } else {
        if (family.type !== undefined) throw new TextFormatError(line, `second TYPE for ${name}`);
        if (!TYPES.has(rest.trim() as MetricType)) throw new TextFormatError(line, `unknown type ${JSON.stringify(rest)}`);
        family.type = rest.trim() as MetricType;
      }
      return;
    }
    const name = METRIC_NAME.exec(content)?.[0];
    if (name === undefined) throw new TextFormatError(line, "a sample must start with a metric name");
    let rest = content.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith("{")) ({ labels, rest } = parseLabels(rest, line));
    const fields = rest.trim().split(/\s+/);
    if (fields.length < 1 || fields.length > 2 || fields[0] === "" || !/^\s/.test(rest)) throw new TextFormatError(line, "expected a value and an optional timestamp");
    if (fields[1] !== undefined && !/^-?\d+$/.test(fields[1])) throw new TextFormatError(line, `bad timestamp ${fields[1]}`);
    const value = parseValue(fields[0]!, line);
    const seriesKey = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seenSeries.has(seriesKey)) throw new TextFormatError(line, `duplicate series ${name}${JSON.stringify(labels)}`);
    seenSeries.add(seriesKey);
    enter(familyOf(name, declared), line).samples.push({ name, labels, value });
  });

  const families: MetricFamily[] = [...declared.values()].map((f) => ({ name: f.name, type: f.type ?? "untyped", help: f.help, samples: f.samples }));
  for (const family of families) if (family.type === "histogram") checkHistogram(family);
  const byName = new Map(families.map((f) => [f.name, f]));
  const allSamples = families.flatMap((f) => f.samples);
  const samples = (sampleName: string, want: Labels = {}): Sample[] =>
    allSamples.filter((s) => s.name === sampleName && Object.entries(want).every(([k, v]) => s.labels[k] === v));
  const sum = (found: Sample[]): number | undefined => (found.length === 0 ? undefined : found.reduce((total, s) => total + s.value, 0));
  return {
    families,
    family: (name) => byName.get(name),
    samples,
    value: (sampleName, want) => sum(samples(sampleName, want)),
    histogramCount: (name, want) => sum(samples(`${name}_count`, want)),
  };
}
