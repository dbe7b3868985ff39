// What every page shares: configuration, the API client, the Cognito sign-in, the header, and
// small formatting helpers. Plain ES modules, no framework, no build step.

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

// ---------------------------------------------------------------------------------------------
// The API

/** A failed API call: the HTTP status, the API's stable `code`, and its message. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Calls the API; returns the parsed body, or throws an ApiError. */
export async function api(path, { method = "GET", key, token, body } = {}) {
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
  const data = await response.json().catch(() => null);
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
    not_found: "This dataset does not exist (any more).",
    no_active_version: "This dataset has no published version to download yet.",
    rate_limited: "The catalog is busy right now. Please try again in a moment.",
    unavailable: "The catalog is temporarily unavailable. Please try again in a moment.",
    http_429: "Too many requests right now. Please wait a moment and try again.",
    key_limit_reached: "You already have 10 active keys. Revoke one before creating another.",
    account_disabled: "Your account has been disabled. Contact the catalog's operators.",
    session: "Your session has ended. Please sign in again.",
    invalid_token: "Your session has ended. Please sign in again.",
    key_not_found: "That key does not exist (any more).",
    network: error.message,
  };
  return sentences[error.code] ?? error.message ?? "Something went wrong.";
}

// ---------------------------------------------------------------------------------------------
// Accounts: Amazon Cognito's own JSON API, called from the page (no SDK needed)

const SESSION = "catalog.session";
const KEYS = "catalog.keys";

export class CognitoError extends Error {
  constructor(type, message) {
    super(message || type);
    this.type = (type || "").split("#").pop();
  }
}

async function cognito(action, body) {
  const { cognitoEndpoint } = await config();
  let response;
  try {
    response = await fetch(cognitoEndpoint, {
      method: "POST",
      headers: {
        "content-type": "application/x-amz-json-1.1",
        "x-amz-target": `AWSCognitoIdentityProviderService.${action}`,
      },
      body: JSON.stringify(body),
    });
  } catch {
    throw new CognitoError("Network", "The sign-in service could not be reached.");
  }
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new CognitoError(data.__type, data.message);
  return data;
}

export async function signUp(email, password) {
  const { userPoolClientId } = await config();
  await cognito("SignUp", {
    ClientId: userPoolClientId,
    Username: email,
    Password: password,
    UserAttributes: [{ Name: "email", Value: email }],
  });
}

export async function confirmSignUp(email, code) {
  const { userPoolClientId } = await config();
  await cognito("ConfirmSignUp", { ClientId: userPoolClientId, Username: email, ConfirmationCode: code });
}

function keep(result, email, refreshToken) {
  const session = {
    email,
    accessToken: result.AccessToken,
    refreshToken: result.RefreshToken ?? refreshToken,
    expiresAt: Date.now() + (result.ExpiresIn ?? 3600) * 1000,
  };
  sessionStorage.setItem(SESSION, JSON.stringify(session));
  return session;
}

/** Signs in; returns the session, or `{challenge, ...}` when Cognito asks for an MFA code. */
export async function signIn(email, password) {
  const { userPoolClientId } = await config();
  const out = await cognito("InitiateAuth", {
    ClientId: userPoolClientId,
    AuthFlow: "USER_PASSWORD_AUTH",
    AuthParameters: { USERNAME: email, PASSWORD: password },
  });
  if (out.ChallengeName) return { challenge: out.ChallengeName, session: out.Session, email };
  return keep(out.AuthenticationResult, email);
}

/** Answers the MFA challenge of `signIn` with the authenticator app's code. */
export async function answerMfa(pending, code) {
  const { userPoolClientId } = await config();
  const out = await cognito("RespondToAuthChallenge", {
    ClientId: userPoolClientId,
    ChallengeName: pending.challenge,
    Session: pending.session,
    ChallengeResponses: { USERNAME: pending.email, SOFTWARE_TOKEN_MFA_CODE: code },
  });
  return keep(out.AuthenticationResult, pending.email);
}

/** The signed-in session with a fresh access token, or null. */
export async function session() {
  const raw = sessionStorage.getItem(SESSION);
  if (!raw) return null;
  const s = JSON.parse(raw);
  if (s.expiresAt - Date.now() > 60_000) return s;
  try {
    const { userPoolClientId } = await config();
    const out = await cognito("InitiateAuth", {
      ClientId: userPoolClientId,
      AuthFlow: "REFRESH_TOKEN_AUTH",
      AuthParameters: { REFRESH_TOKEN: s.refreshToken },
    });
    return keep(out.AuthenticationResult, s.email, s.refreshToken);
  } catch {
    signOutLocally();
    return null;
  }
}

function signOutLocally() {
  sessionStorage.removeItem(SESSION);
  sessionStorage.removeItem(KEYS);
}

export async function signOut() {
  const raw = sessionStorage.getItem(SESSION);
  signOutLocally();
  if (!raw) return;
  // Ends the account's sessions (its refresh tokens); an access token lapses within the hour.
  await cognito("GlobalSignOut", { AccessToken: JSON.parse(raw).accessToken }).catch(() => {});
}

/** Whether the signed-in account signs in with an authenticator code. */
export async function mfaEnabled(accessToken) {
  const user = await cognito("GetUser", { AccessToken: accessToken });
  return (user.UserMFASettingList ?? []).includes("SOFTWARE_TOKEN_MFA");
}

/** The secret to add to an authenticator app (the first step of turning MFA on). */
export async function startMfa(accessToken) {
  return (await cognito("AssociateSoftwareToken", { AccessToken: accessToken })).SecretCode;
}

/** Checks a first code from the app, then makes it required at every sign-in. */
export async function finishMfa(accessToken, code) {
  await cognito("VerifySoftwareToken", { AccessToken: accessToken, UserCode: code, FriendlyDeviceName: "authenticator app" });
  await cognito("SetUserMFAPreference", {
    AccessToken: accessToken,
    SoftwareTokenMfaSettings: { Enabled: true, PreferredMfa: true },
  });
}

export async function stopMfa(accessToken) {
  await cognito("SetUserMFAPreference", {
    AccessToken: accessToken,
    SoftwareTokenMfaSettings: { Enabled: false, PreferredMfa: false },
  });
}

/** Keys this tab may use for downloads (created here, with "use in this tab" ticked). */
export function tabKeys() {
  return JSON.parse(sessionStorage.getItem(KEYS) ?? "[]");
}

export function rememberKey(id, label, secret) {
  const keys = tabKeys().filter((k) => k.id !== id);
  keys.push({ id, label, secret });
  sessionStorage.setItem(KEYS, JSON.stringify(keys));
}

export function forgetKey(id) {
  sessionStorage.setItem(KEYS, JSON.stringify(tabKeys().filter((k) => k.id !== id)));
}

// ---------------------------------------------------------------------------------------------
// The page

/** Builds an element: `h("a", {href: "/"}, "text", child, ...)`. Text is never parsed as HTML. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** The header's account links: the page's own "Sign in" and "Sign up", or (signed in) "API
 * keys", the email and "Sign out". */
export async function header() {
  const slot = document.getElementById("account-nav");
  if (!slot) return;
  const s = await session();
  if (s) {
    slot.replaceChildren(
      h("a", { href: "account.html" }, "API keys"),
      h("span", { class: "who" }, s.email),
      h("button", {
        class: "secondary",
        type: "button",
        onclick: async () => {
          await signOut();
          location.href = "account.html";
        },
      }, "Sign out"),
    );
  }
}

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

export function humanNumber(n) {
  return new Intl.NumberFormat("en").format(n);
}

/** "3 days", "5 hours", "12 minutes" until `iso` (or since, when past). */
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

/** The keyless badge, or the "key required" one. */
export function accessBadge(keylessUntil, now = Date.now()) {
  const until = keylessUntil ? Date.parse(keylessUntil) : 0;
  if (until > now) {
    return h("span", { class: "badge", title: `keyless until ${humanDate(keylessUntil)}` },
      `Keyless · ${humanDuration(until - now)} left`);
  }
  return h("span", { class: "badge gated" }, "Key required");
}

/** Copies text, saying so on the button for a moment. */
export async function copy(button, text) {
  try {
    await navigator.clipboard.writeText(text);
    const before = button.textContent;
    button.textContent = "Copied";
    setTimeout(() => { button.textContent = before; }, 1500);
  } catch {
    button.textContent = "Select and copy";
  }
}
