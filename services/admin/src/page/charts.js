// Spend and token plots with Chart.js (window.Chart, served from the chart.js
// npm package): one stacked bar per time bucket, one colour per member, team
// or model.

const PALETTE = ["#4f46e5", "#0ea5e9", "#10b981", "#f59e0b", "#ef4444", "#8b5cf6", "#14b8a6", "#f97316", "#64748b", "#ec4899"];
const charts = new Map();

/** Every bucket start (ISO) from `since` to `until` in steps of `bucket` ("hour" | "day"). */
export function bucketStarts(since, until, bucket) {
  const step = bucket === "hour" ? 3_600_000 : 86_400_000;
  const starts = [];
  for (let t = Date.parse(since); t < Date.parse(until); t += step) starts.push(new Date(t).toISOString());
  return starts;
}

function bucketLabel(iso, bucket) {
  const d = new Date(iso);
  return bucket === "hour"
    ? d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" })
    : d.toLocaleDateString(undefined, { month: "short", day: "numeric" });
}

/**
 * Draws (or redraws) a stacked bar chart on `canvas`.
 * series: { buckets: [iso], bucket, keys: [key], label(key), value(point) }, points: [{bucketStart, key, ...}].
 */
export function drawStackedBars(canvas, { buckets, bucket, points, label, value, unit }) {
  const keys = [...new Set(points.map((p) => p.key))];
  const byBucket = new Map(buckets.map((b, i) => [Date.parse(b), i]));
  const datasets = keys.map((key, i) => {
    const data = new Array(buckets.length).fill(0);
    for (const p of points) {
      if (p.key !== key) continue;
      const index = byBucket.get(Date.parse(p.bucketStart));
      if (index !== undefined) data[index] += value(p);
    }
    const color = PALETTE[i % PALETTE.length];
    return { label: label(key), data, backgroundColor: color, borderColor: color, borderRadius: 3, maxBarThickness: 42 };
  });
  const config = {
    type: "bar",
    data: { labels: buckets.map((b) => bucketLabel(b, bucket)), datasets },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      interaction: { mode: "index", intersect: false },
      scales: {
        x: { stacked: true, grid: { display: false }, ticks: { maxRotation: 0, autoSkip: true, maxTicksLimit: 12 } },
        y: { stacked: true, beginAtZero: true, ticks: { callback: (v) => (unit === "usd" ? `$${v}` : Intl.NumberFormat("en-US", { notation: "compact" }).format(v)) } },
      },
      plugins: {
        legend: { position: "bottom", labels: { boxWidth: 12, boxHeight: 12 } },
        tooltip: { callbacks: { label: (ctx) => `${ctx.dataset.label}: ${unit === "usd" ? `$${ctx.parsed.y.toFixed(4)}` : Intl.NumberFormat("en-US").format(ctx.parsed.y)}` } },
      },
    },
  };
  charts.get(canvas)?.destroy();
  const chart = new window.Chart(canvas, config);
  charts.set(canvas, chart);
  // For tests and the curious: what the chart holds (a sum over every bar).
  canvas.dataset.total = String(datasets.reduce((sum, d) => sum + d.data.reduce((a, b) => a + b, 0), 0));
  canvas.dataset.series = String(datasets.length);
  return chart;
}
