// schema.org JSON-LD for search engines (Google's Dataset Search reads it): the dataset page's
// `Dataset`, the catalog page's `DataCatalog`, and the element in <head> that carries them.
// Everything is built from what the API answered; nothing is guessed.
import { humanNumber } from "./format.js";

/** The catalog's name, as every page's title and header say it. */
export const CATALOG_NAME = "Dataset catalog";

// Google asks for a description of 50 to 5,000 characters.
const SHORTEST = 50;
const LONGEST = 5000;
// Column names a built description names, at most.
const NAMED_COLUMNS = 10;

/** A dataset's page on this site: `dataset.html?slug=…` beside the catalog page. */
export function datasetPageUrl(catalogUrl, slug) {
  return new URL(`dataset.html?slug=${encodeURIComponent(slug)}`, catalogUrl).href;
}

/** A license as an IRI: a URL as given, an SPDX identifier (`CC-BY-4.0`) as its page on
 * spdx.org; null for free text. The API's Croissant and DCAT documents read it alike
 * (`license_iri` in shared/http/src/linked/mod.rs). */
export function licenseIri(license) {
  const text = typeof license === "string" ? license.trim() : "";
  if (/^https?:\/\//.test(text)) return /\s/.test(text) ? null : text;
  return text.length <= 64 && /^[A-Za-z0-9][A-Za-z0-9.+-]*$/.test(text) ? `https://spdx.org/licenses/${text}` : null;
}

/** `source` as a URL, when it is one (http or https, no whitespace, and it parses). */
export function sourceUrl(source) {
  const text = typeof source === "string" ? source.trim() : "";
  if (!/^https?:\/\/\S+$/.test(text)) return null;
  try {
    return new URL(text).hostname ? text : null;
  } catch {
    return null;
  }
}

/** An exclusive date or timestamp edge, one step earlier: the latest value its bin can hold
 * (a day for dates; a millisecond, or the edge's own millisecond, for timestamps), written as
 * the edge is (with its `Z` or offset, or none). Null when the edge is neither. */
export function justBefore(edge) {
  const date = /^(\d{4}-\d\d-\d\d)$/.exec(edge);
  if (date) return new Date(Date.parse(`${date[1]}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
  const time = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,3})(\d*))?/.exec(edge);
  if (!time) return null;
  const zone = edge.slice(time[0].length);
  if (!/^(Z|[+-]\d\d:\d\d)?$/.test(zone)) return null;
  // Counted on the edge's own clock: the result keeps the edge's zone.
  const ms = Date.parse(`${time[1]}.${(time[2] ?? "").padEnd(3, "0")}Z`);
  const finer = /[1-9]/.test(time[3] ?? "");
  return Number.isNaN(ms) ? null : new Date(finer ? ms : ms - 1).toISOString().slice(0, -1) + zone;
}

/** A date or timestamp column's range, as its histogram tells it (the statistics' `min` and
 * `max` are numbers only): `min` is the first edge, exact; the maximum lies in the last bin,
 * from `last` (its first edge) to `latest` (the latest value it can hold), exactly known when
 * the two are the same. Null for a column without such a histogram. */
export function timeRange(column) {
  const edges = column?.histogram?.bin_edges;
  if (!Array.isArray(edges) || edges.length < 2 || !edges.every((e) => typeof e === "string")) return null;
  return { min: edges[0], last: edges[edges.length - 2], latest: justBefore(edges[edges.length - 1]) };
}

/** The period the dataset's values cover, as an ISO 8601 interval: from the first date or
 * timestamp column with a histogram, its minimum to the latest value its last bin can hold
 * (every value lies within; the end is exact when that bin is a day, or a unit, wide). */
function temporalCoverage(schema) {
  for (const column of Array.isArray(schema) ? schema : []) {
    if (!/^(date|timestamp)/.test(column?.dtype ?? "")) continue;
    const range = timeRange(column);
    if (range?.latest) return `${range.min}/${range.latest}`;
  }
  return null;
}

/** Cut to Google's longest description, on a character (not inside a surrogate pair). */
function atMost(text, longest = LONGEST) {
  const characters = Array.from(text);
  return characters.length <= longest ? text : `${characters.slice(0, longest - 1).join("").trimEnd()}…`;
}

const count = (n, word) => `${humanNumber(n)} ${word}${n === 1 ? "" : "s"}`;

/** A description of at least 50 characters: the dataset's own, or (missing or shorter) the
 * dataset's own followed by what its metadata says — name, category, rows × columns (and the
 * columns' names), version, license and source. */
export function description(d) {
  const own = typeof d.description === "string" ? d.description.trim() : "";
  if (Array.from(own).length >= SHORTEST) return atMost(own);
  const parts = [];
  if (own) parts.push(/[.!?]$/.test(own) ? own : `${own}.`);
  const shape = Number.isFinite(d.row_count) && Number.isFinite(d.column_count)
    ? `: ${count(d.row_count, "row")} × ${count(d.column_count, "column")}` : "";
  parts.push(`${d.name} is a dataset${d.category ? ` in the ${d.category} category` : ""} of the ${CATALOG_NAME}${shape}, in a Parquet file.`);
  const names = Array.isArray(d.schema) ? d.schema.map((c) => c?.name).filter((n) => typeof n === "string") : [];
  if (names.length) {
    const more = names.length - NAMED_COLUMNS;
    parts.push(`Columns: ${names.slice(0, NAMED_COLUMNS).join(", ")}${more > 0 ? ` and ${count(more, "other")}` : ""}.`);
  }
  if (Number.isFinite(d.version)) parts.push(`Version ${d.version}.`);
  if (d.license) parts.push(`License: ${d.license}.`);
  if (typeof d.source === "string" && d.source.trim()) parts.push(`Source: ${d.source.trim()}.`);
  return atMost(parts.join(" "));
}

/** The category, then the tags, once each. */
function keywords(d) {
  return [...new Set([d.category, ...(Array.isArray(d.tags) ? d.tags : [])])]
    .filter((k) => typeof k === "string" && k !== "");
}

/** The organisation `source` names: a URL's host (and the URL), or the text. */
function creator(source) {
  const url = sourceUrl(source);
  if (url) return { "@type": "Organization", name: new URL(url).hostname, url };
  const text = typeof source === "string" ? source.trim() : "";
  return text ? { "@type": "Organization", name: text } : null;
}

/** What a download needs, in a sentence; null while no key is needed (a keyless window). */
function conditionsOfAccess(d) {
  if (d.access?.mode === "keyless") return null;
  if (d.access?.level === "approval") {
    const decided = d.access.approval === "automatic" ? " (granted at once)"
      : d.access.approval === "manual" ? " (an operator decides)" : "";
    return `Shared by approval: downloading needs a read-scoped API key of an account that has been granted access to this dataset. Sign up, ask for access on the dataset's page${decided}, and create a key under API keys. The metadata and column statistics are public.`;
  }
  return "A read-scoped API key is needed to download the data: sign up and create one under API keys. The metadata and column statistics are public.";
}

/** Whether a statistic is a number as the file has it: an integer column's beyond 2^53 has
 * been rounded by the time JavaScript reads it. */
function exact(value, dtype) {
  return Number.isFinite(value) && (!/^u?int/.test(dtype ?? "") || Number.isSafeInteger(value));
}

/** One column as a schema.org PropertyValue: its name, its type, and a numeric column's range. */
function variable(column) {
  const value = { "@type": "PropertyValue", name: column.name, description: column.dtype };
  if (exact(column.min, column.dtype) && exact(column.max, column.dtype)) {
    value.minValue = column.min;
    value.maxValue = column.max;
  }
  return value;
}

/** The catalog, as a dataset names it (its page has the full `DataCatalog`). */
function catalogNode(catalogUrl) {
  return { "@type": "DataCatalog", name: CATALOG_NAME, url: catalogUrl };
}

/** Drops null and undefined properties: what the metadata does not say is left out. */
function pruned(object) {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== null && v !== undefined));
}

/** A version of many files (the metadata's `files`): one `DataDownload` per split (the whole
 * version when it has none), its `contentUrl` the data endpoint's listing of that split's
 * Parquet files, each with its own signed URL. */
function splitDownloads(d, base) {
  const listing = `${base}/datasets/${encodeURIComponent(d.slug)}/data?version=${d.version}`;
  const splits = Array.isArray(d.files.splits) && d.files.splits.length
    ? d.files.splits
    : [{ name: null, files: d.files.count, size: d.size }];
  return splits.map((s) => pruned({
    "@type": "DataDownload",
    name: s.name === null ? `${d.slug}-v${d.version}` : `${d.slug}-v${d.version} ${s.name}`,
    description: `${s.files} Parquet file${s.files === 1 ? "" : "s"}${s.name === null ? "" : ` of split ${s.name}`}, listed with their URLs at contentUrl.`,
    encodingFormat: "application/vnd.apache.parquet",
    contentUrl: s.name === null ? listing : `${listing}&split=${encodeURIComponent(s.name)}`,
    contentSize: Number.isFinite(s.size) ? `${s.size} B` : null,
  }));
}

/** The dataset page's schema.org `Dataset`, from the metadata answer `d` (`GET
 * /datasets/{slug}`). `apiBase`: the API's absolute base URL; `pageUrl`: the dataset page's
 * canonical URL; `catalogUrl`: the catalog page's. */
export function datasetJsonLd(d, { apiBase, pageUrl, catalogUrl }) {
  const base = apiBase.replace(/\/+$/, "");
  const license = typeof d.license === "string" ? d.license.trim() : "";
  return pruned({
    "@context": "https://schema.org",
    "@type": "Dataset",
    name: d.name,
    alternateName: d.slug,
    description: description(d),
    url: pageUrl,
    identifier: d.id,
    version: d.version,
    creator: creator(d.source),
    keywords: keywords(d),
    license: license ? licenseIri(license) ?? license : null,
    isAccessibleForFree: true,
    conditionsOfAccess: conditionsOfAccess(d),
    dateCreated: d.created_at,
    dateModified: d.updated_at,
    datePublished: d.published_at,
    temporalCoverage: temporalCoverage(d.schema),
    variableMeasured: Array.isArray(d.schema) ? d.schema.map(variable) : null,
    distribution: d.files ? splitDownloads(d, base) : [pruned({
      "@type": "DataDownload",
      name: `${d.slug}-v${d.version}.parquet`,
      encodingFormat: "application/vnd.apache.parquet",
      contentUrl: `${base}/datasets/${encodeURIComponent(d.slug)}/download?version=${d.version}`,
      contentSize: Number.isFinite(d.size) ? `${d.size} B` : null,
      sha256: d.sha256,
    })],
    isPartOf: catalogUrl,
    includedInDataCatalog: catalogNode(catalogUrl),
  });
}

/** The catalog page's schema.org `DataCatalog`: the datasets `items` the page shows (list
 * summaries of `GET /datasets`), each with its page. */
export function catalogJsonLd(items, { catalogUrl, description: about }) {
  return pruned({
    "@context": "https://schema.org",
    "@type": "DataCatalog",
    name: CATALOG_NAME,
    description: about,
    url: catalogUrl,
    dataset: items.map((d) => {
      const license = typeof d.license === "string" ? d.license.trim() : "";
      return pruned({
        "@type": "Dataset",
        name: d.name,
        description: description(d),
        url: datasetPageUrl(catalogUrl, d.slug),
        identifier: d.id,
        license: license ? licenseIri(license) ?? license : null,
        keywords: keywords(d),
      });
    }),
  });
}

/** JSON-LD as an element's text: JSON with every `<` escaped, so that no value (a description
 * holding `</script>` or `<!--`) can end or change the element when the page is written out. */
export function jsonLdText(data) {
  return JSON.stringify(data).replace(/</g, "\\u003c");
}

/** Puts `data` in <head> as `<script type="application/ld+json" id="{id}">`, replacing the
 * one of that id; null removes it. A data block: never run, so the pages' script-src policy
 * does not concern it. */
export function placeJsonLd(id, data) {
  let script = document.getElementById(id);
  if (data === null || data === undefined) {
    script?.remove();
    return;
  }
  if (!script) {
    script = document.createElement("script");
    script.type = "application/ld+json";
    script.id = id;
    document.head.append(script);
  }
  script.textContent = jsonLdText(data);
}
