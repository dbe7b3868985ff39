// Apache Arrow, for DuckDB-WASM's module (vendor/duckdb/duckdb-browser.mjs), which imports it
// by name: dataset.html's import map points "apache-arrow" here. Arrow's npm package has ES
// modules only as some 140 files (with more bare imports); its one-file build is a classic
// script that defines `Arrow`, loaded once, here, when the SQL console opens.
await new Promise((resolve, reject) => {
  const script = document.createElement("script");
  script.src = "vendor/apache-arrow/Arrow.esnext.min.js";
  script.onload = resolve;
  script.onerror = () => reject(new Error("Apache Arrow could not be loaded."));
  document.head.append(script);
});

// What DuckDB-WASM's module uses of it.
export const { RecordBatchReader, Table, Type, tableToIPC } = globalThis.Arrow;
