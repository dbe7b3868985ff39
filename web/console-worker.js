// The SQL console's DuckDB worker: DuckDB-WASM's own (vendor/duckdb/), with one change to how it
// learns a file's size. It asks with HEAD, but a presigned S3 URL is signed for GET alone, so S3
// refuses the HEAD (403) and DuckDB would download the whole file instead of reading ranges of
// it. Here every HEAD goes out as a one-byte GET (Range: bytes=0-0), and its Content-Length
// is the total that Content-Range reports: the size DuckDB asked for, from a request the URL
// allows. Everything else goes out as DuckDB sends it.
//
// It also counts what it fetched (the bytes of each answer's body, the requests and the distinct
// files), and tells the page when asked on the BroadcastChannel of the worker's name
// (console.js asks before and after a query: the query read the difference). DuckDB's requests
// are synchronous, so once a query is answered every one of its reads is counted.
const reads = { bytes: 0, requests: 0, files: new Set() };
// The browser's own, before SizeByRange replaces it: the body's true length, not a size asked for.
const responseHeader = XMLHttpRequest.prototype.getResponseHeader;

function counted(request, url) {
  if (request.counted) return;
  request.counted = true;
  const length = Number(responseHeader.call(request, "Content-Length"));
  if (request.status >= 200 && request.status < 300) {
    reads.bytes += Number.isFinite(length) ? length : 0;
    reads.requests += 1;
    reads.files.add(String(url).split("?")[0]);
  }
}

const channelName = self.name;
if (channelName) {
  const channel = new BroadcastChannel(channelName);
  channel.onmessage = (event) => {
    if (event.data?.ask) {
      channel.postMessage({ answer: event.data.ask, bytes: reads.bytes, requests: reads.requests, files: [...reads.files] });
    }
  };
}

class SizeByRange extends XMLHttpRequest {
  open(method, url, ...rest) {
    this.asksSize = String(method).toUpperCase() === "HEAD";
    this.ranged = false;
    this.url = url;
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
    this.counted = false;
    this.addEventListener("loadend", () => counted(this, this.url), { once: true });
    const sent = super.send(body);
    // A synchronous request (DuckDB's) has its answer once send returns.
    if (this.readyState === 4) counted(this, this.url);
    return sent;
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
