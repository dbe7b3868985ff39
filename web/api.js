// The deployment's configuration and the catalog's API: calls, and a sentence for each error.

let configPromise;

/** The deployment's configuration (config.json, written at deploy or by the local server). */
export function config() {
  // Preloaded by each page's <link rel="preload">, so it arrives with the scripts.
  configPromise ??= fetch("config.json").then((r) => {
    if (!r.ok) throw new Error("config.json is missing");
    return r.json();
  });
  return configPromise;
}

/** A failed API call: the HTTP status, the API's stable `code`, and its message. */
class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Calls the API; returns the parsed body, or throws an ApiError. `parse` reads a successful
 * answer's text (the data table's keeps large integers exact); `JSON.parse` by default. */
export async function api(path, { method = "GET", key, token, body, parse = JSON.parse } = {}) {
  const { apiBase } = await config();
  const headers = { accept: "application/json" };
  if (key) headers["x-api-key"] = key;
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  let response;
  try {
    response = await fetch(apiBase + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
    });
  } catch {
    throw new ApiError(0, "network", "The catalog could not be reached. Check your connection and try again.");
  }
  if (response.status === 204) return null;
  const text = await response.text().catch(() => "");
  let data = null;
  try {
    data = (response.ok ? parse : JSON.parse)(text);
  } catch {
    // Not JSON: an error is told by its status; a successful answer is null.
  }
  if (!response.ok) {
    // API Gateway's own answers ({"message": ...}) have no code.
    const code = data?.code ?? (response.status === 401 ? "session" : `http_${response.status}`);
    throw new ApiError(response.status, code, data?.error ?? data?.message ?? response.statusText);
  }
  return data;
}

/** A sentence a person understands for an API error, from its code. */
export function explain(error) {
  const sentences = {
    missing_key: "This dataset needs an API key. Sign in and create one under API keys, or paste a key you already have.",
    invalid_key: "That API key was refused: it is mistyped, expired or revoked.",
    insufficient_scope: "That API key is not allowed to download data (it has no read scope).",
    access_required: "This dataset is shared by approval, and your account has not been granted access to it. Ask for access in the Access section of this page.",
    key_not_for_dataset: "That API key is limited to other datasets, so it cannot download this one.",
    not_found: "This dataset does not exist (any more).",
    no_active_version: "This dataset has no published version to download yet.",
    unpublished: "The catalog's operators have taken this dataset down.",
    rate_limited: "The catalog is busy right now. Please try again in a moment.",
    unavailable: "The catalog is temporarily unavailable. Please try again in a moment.",
    http_429: "Too many requests right now. Please wait a moment and try again.",
    key_limit_reached: "You have reached the limit of active keys. Revoke one before creating another.",
    account_disabled: "Your account has been disabled. Contact the catalog's operators.",
    session: "Your session has ended. Please sign in again.",
    invalid_token: "Your session has ended. Please sign in again.",
    account_unknown: "This account no longer exists, or was signed out everywhere. Please sign in again.",
    key_not_found: "That key does not exist (any more).",
    request_pending: "You have already asked for access to this dataset: an operator will decide.",
    already_granted: "You already have access to this dataset.",
    request_not_needed: "This dataset needs no request: any account's read key reads it.",
    request_not_found: "There is no pending request to withdraw (any more).",
    terms_not_accepted: "Accept the dataset's terms to ask for access.",
    not_an_operator: "This page is for the catalog's operators.",
    network: error.message,
  };
  return sentences[error.code] ?? error.message ?? "Something went wrong.";
}
