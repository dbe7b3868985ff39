// The SQL console's DuckDB worker: DuckDB-WASM's own (vendor/duckdb/), with one change to how it
// learns a file's size. It asks with HEAD, but a presigned S3 URL is signed for GET alone, so S3
// refuses the HEAD (403) and DuckDB would download the whole file instead of reading ranges of
// it. Here every HEAD goes out as a one-byte GET (Range: bytes=0-0), and its Content-Length
// is the total that Content-Range reports: the size DuckDB asked for, from a request the URL
// allows. Everything else goes out as DuckDB sends it.
class SizeByRange extends XMLHttpRequest {
  open(method, url, ...rest) {
    this.asksSize = String(method).toUpperCase() === "HEAD";
    this.ranged = false;
    return super.open(this.asksSize ? "GET" : method, url, ...rest);
  }

  setRequestHeader(name, value) {
    if (this.asksSize && name.toLowerCase() === "range") {
      this.ranged = true;
      return super.setRequestHeader(name, "bytes=0-0");
    }
    return super.setRequestHeader(name, value);
  }

  send(body) {
    if (this.asksSize && !this.ranged) super.setRequestHeader("Range", "bytes=0-0");
    return super.send(body);
  }

  getResponseHeader(name) {
    if (this.asksSize && name.toLowerCase() === "content-length") {
      const total = super.getResponseHeader("Content-Range")?.split("/")[1];
      if (total && total !== "*") return total;
    }
    return super.getResponseHeader(name);
  }
}
self.XMLHttpRequest = SizeByRange;

importScripts("vendor/duckdb/duckdb-browser-eh.worker.js");
