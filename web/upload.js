// "Publish a new version" on the dataset page, for an organisation's editors and admins
// (docs/site.md): the file's SHA-256 computed a slice at a time (hash-wasm, under /vendor/,
// loaded only when a file is sent: WebCrypto hashes one buffer only), then its parts PUT straight
// to the data bucket's presigned URLs with a progress bar, resumed from the parts already sent,
// completed, and the upload followed until it is published or fails (the API's uploads routes:
// docs/api.md, "Publishing from the site: uploads").
import { api, explain } from "./api.js";
import { fill, h, orgOf } from "./dom.js";
import { humanBytes } from "./format.js";

/** The largest file the site takes (the API answers its own `max_size` too). */
export const MAX_SIZE = 5 * 1024 ** 3;
const SLICE = 8 * 1024 * 1024;
const AT_ONCE = 3;
const POLL_MS = 2000;

/** A file's name as the upload routes take it: ASCII letters, digits, `.`, `_` and `-`, 1 to
 * 128, not starting with `.`. */
export function uploadName(name) {
  const safe = name.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "");
  return (safe || "file").slice(-128);
}

async function sha256(file, progress) {
  await import("./vendor/hash-wasm/sha256.umd.min.js");
  const hasher = await globalThis.hashwasm.createSHA256();
  hasher.init();
  for (let at = 0; at < file.size; at += SLICE) {
    hasher.update(new Uint8Array(await file.slice(at, at + SLICE).arrayBuffer()));
    progress(Math.min(file.size, at + SLICE));
  }
  return hasher.digest("hex");
}

/** PUTs one part; resolves with S3's ETag. `sent(bytes)` follows its progress. */
function putPart(url, blob, sent) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", url);
    xhr.upload.onprogress = (e) => sent(e.loaded);
    xhr.onload = () => {
      const etag = xhr.getResponseHeader("ETag");
      if (xhr.status >= 200 && xhr.status < 300 && etag) resolve(etag);
      else reject(new Error(xhr.status === 403 ? "expired" : `the bucket answered ${xhr.status}`));
    };
    xhr.onerror = () => reject(new Error("the bucket could not be reached"));
    xhr.send(blob);
  });
}

/** The form. `token()` gives the session's access token; `reload(said)` redraws the page. */
export function uploadForm(slug, token, reload) {
  const org = orgOf(slug);
  const name = slug.slice(org.length + 1);
  const base = `/orgs/${encodeURIComponent(org)}/uploads`;
  const memory = `upload:${slug}`;
  const input = h("input", { type: "file", id: "upload-file", accept: ".parquet,.csv,text/csv" });
  const bar = h("progress", { id: "upload-progress", max: 1, value: 0, hidden: true });
  const said = h("p", { id: "upload-status", role: "status" });
  const button = h("button", { type: "submit" }, "Publish");
  const say = (...text) => fill(said, ...text);
  const fail = (text) => fill(said, h("span", { class: "error", role: "alert" }, text));

  // The upload in progress for this dataset, kept with the file it is of (name, size, last
  // modified) and the ETags of the parts sent, so that a reload resumes it.
  const remembered = () => {
    try {
      return JSON.parse(localStorage.getItem(memory) ?? "null");
    } catch {
      return null;
    }
  };
  const remember = (record) => localStorage.setItem(memory, JSON.stringify(record));

  async function resumable(file, digest) {
    const kept = remembered();
    if (!kept || kept.name !== file.name || kept.size !== file.size || kept.modified !== file.lastModified || kept.sha256 !== digest) return null;
    try {
      const answer = await api(`${base}/${kept.id}`, { token: await token() });
      return answer.upload.state === "uploading" ? { kept, answer } : null;
    } catch {
      return null;
    }
  }

  async function send(file) {
    if (file.size > MAX_SIZE) {
      fail(`This file is ${humanBytes(file.size)}, past the ${humanBytes(MAX_SIZE)} the site takes: publish it with catalog-admin publish.`);
      return;
    }
    if (!file.size) {
      fail("This file is empty.");
      return;
    }
    bar.hidden = false;
    bar.max = file.size;
    bar.value = 0;
    say("Checking the file (SHA-256)…");
    const digest = await sha256(file, (done) => { bar.value = done; });
    let { kept, answer } = (await resumable(file, digest)) ?? {};
    if (answer) {
      say("Resuming the upload begun before…");
    } else {
      answer = await api(base, {
        method: "POST", token: await token(),
        body: { dataset: name, filename: uploadName(file.name), size: file.size, sha256: digest },
      });
      kept = { id: answer.upload.id, name: file.name, size: file.size, modified: file.lastModified, sha256: digest, etags: {} };
      remember(kept);
    }
    const { id, part_size: partSize } = answer.upload;
    const etags = kept.etags;
    for (const part of answer.held ?? []) if (part.etag) etags[part.number] = part.etag;
    const bytesOf = (n) => Math.min(partSize, file.size - (n - 1) * partSize);
    const progress = {};
    const shown = () => {
      bar.value = Object.keys(etags).reduce((a, n) => a + bytesOf(Number(n)), 0)
        + Object.values(progress).reduce((a, b) => a + b, 0);
      say(`Sending: ${humanBytes(bar.value)} of ${humanBytes(file.size)}…`);
    };
    shown();
    while (Object.keys(etags).length < answer.parts) {
      const todo = (answer.urls ?? []).filter((u) => !etags[u.number]);
      if (!todo.length) {
        answer = await api(`${base}/${id}`, { token: await token() });
        if (!(answer.urls ?? []).some((u) => !etags[u.number])) throw new Error("the catalog gave no URL for the parts left");
        continue;
      }
      let expired = false;
      const next = async () => {
        for (let u = todo.shift(); u; u = todo.shift()) {
          const start = (u.number - 1) * partSize;
          try {
            etags[u.number] = await putPart(u.url, file.slice(start, start + bytesOf(u.number)), (b) => {
              progress[u.number] = b;
              shown();
            });
          } catch (error) {
            if (error.message !== "expired") throw error;
            expired = true;
          } finally {
            delete progress[u.number];
          }
          remember(kept);
          shown();
        }
      };
      // Every part under way settles (and its ETag is kept) before a failure is told.
      const settled = await Promise.allSettled(Array.from({ length: AT_ONCE }, next));
      const failed = settled.find((r) => r.status === "rejected");
      if (failed) throw failed.reason;
      // URLs past their hour: fresh ones for the parts left.
      if (expired || Object.keys(etags).length < answer.parts) answer = await api(`${base}/${id}`, { token: await token() });
    }
    say("Assembling the file…");
    const parts = Array.from({ length: answer.parts }, (_, i) => ({ number: i + 1, etag: etags[i + 1] }));
    let state = (await api(`${base}/${id}/complete`, { method: "POST", token: await token(), body: { parts } })).upload;
    localStorage.removeItem(memory);
    say("Publishing: the catalog reads the file and computes its statistics…");
    while (state.state === "publishing") {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      state = (await api(`${base}/${id}`, { token: await token() })).upload;
    }
    bar.hidden = true;
    if (state.state === "published") await reload(`Published version ${state.version}.`);
    else fail(`Not published: ${state.reason ?? "the file was refused"}. The version before keeps serving.`);
  }

  const form = h("form", {
    class: "stack", id: "upload",
    onsubmit: async (event) => {
      event.preventDefault();
      const file = input.files[0];
      if (!file) {
        fail("Choose a file first (Parquet or CSV).");
        return;
      }
      button.disabled = true;
      try {
        await send(file);
      } catch (error) {
        const words = error.code === "upload_too_large" ? `${error.message}` : error.code ? explain(error) : error.message;
        fail(`The upload stopped: ${words}. Publish again with the same file to resume it.`);
      } finally {
        button.disabled = false;
      }
    },
  },
  h("h3", {}, "Publish a new version"),
  h("p", { class: "meta" }, `A Parquet or CSV file of at most ${humanBytes(MAX_SIZE)}, sent straight to the catalog's storage; larger ones are published with catalog-admin publish.`),
  h("label", { for: "upload-file" }, "File"), input,
  h("div", { class: "row" }, button), bar, said);
  return form;
}
