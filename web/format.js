// Numbers, sizes, dates and durations as a person reads them.

export function humanBytes(bytes) {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

const WHOLE = new Intl.NumberFormat("en");
const DECIMAL = new Intl.NumberFormat("en", { maximumSignificantDigits: 6 });
const COMPACT = new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 1 });

/** A whole number with thousands separators: 12,345. */
export function humanNumber(n) {
  return WHOLE.format(n);
}

/** A dataset's downloads over the last 30 days (`downloads` in the API's answers): the count,
 * or null when the answer has none (an API from before the counts), so that nothing is shown. */
export function downloadCount(d) {
  const n = d?.downloads;
  return Number.isInteger(n) && n >= 0 ? n : null;
}

/** The downloads of the last 30 days in a few words: "1,234 downloads (30 days)",
 * "No downloads in 30 days"; null without a count (see `downloadCount`). */
export function humanDownloads(n) {
  if (n === null || n === undefined) return null;
  if (n === 0) return "No downloads in 30 days";
  return `${WHOLE.format(n)} download${n === 1 ? "" : "s"} (30 days)`;
}

/** Any number as a statistic reads: integers whole, others to 6 significant digits, with
 * thousands separators (12,345.7, 0.000123); beyond them, in scientific notation (1.5e+21). */
export function humanDecimal(x) {
  if (typeof x !== "number" || !Number.isFinite(x)) return String(x);
  if (Number.isInteger(x) && Math.abs(x) < 1e21) return WHOLE.format(x);
  const size = Math.abs(x);
  if (size >= 1e15 || (size > 0 && size < 1e-6)) return Number(x.toPrecision(6)).toExponential();
  return DECIMAL.format(x);
}

/** A count on a chart's axis: 950, 1.2K, 3.4M. */
export function compactNumber(n) {
  return COMPACT.format(n);
}

/** A length of time in milliseconds, in words, its sign ignored and rounded: "12 minutes" under
 * an hour, "5 hours" under two days, "3 days" beyond. */
export function humanDuration(ms) {
  const minutes = Math.round(Math.abs(ms) / 60_000);
  if (minutes < 60) return `${minutes} minute${minutes === 1 ? "" : "s"}`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} hour${hours === 1 ? "" : "s"}`;
  const days = Math.round(hours / 24);
  return `${days} day${days === 1 ? "" : "s"}`;
}

export function humanDate(iso) {
  if (!iso) return "never";
  const date = new Date(iso);
  return date.toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" }) + " UTC";
}
