// Sign up, confirm, sign in, and the API keys settings: create (the secret shown once), list,
// revoke; and the account's access to datasets shared by approval.
import { api, config, explain } from "./api.js";
import { copy, h, header, slugText } from "./dom.js";
import { humanDate } from "./format.js";
import { showMemberships } from "./memberships.js";
import { myAccess, standing } from "./request.js";
import {
  CognitoError, answerMfa, answerNewPassword, checkPassword, confirmSignUp, endSession, finishMfa,
  forgetKey,
  forgotPassword, mfaEnabled, rememberKey, resendCode, resetPassword, session, signIn, signUp,
  startMfa, stopMfa,
} from "./session.js";

const status = document.getElementById("status");
const say = (text, error = false) => status.replaceChildren(error ? h("span", { class: "error", role: "alert" }, text) : text);

function cognitoSentence(error) {
  const sentences = {
    NotAuthorizedException: "Wrong email or password.",
    UserNotFoundException: "Wrong email or password.",
    UserNotConfirmedException: "Confirm your email first: enter the code we sent you.",
    CodeMismatchException: "That code is not right. Check it and try again.",
    InvalidPasswordException: "That password is too weak: use at least 12 characters, with upper and lower case letters and a digit.",
    ExpiredCodeException: "That code has expired: ask for a new one.",
    LimitExceededException: "Too many attempts. Wait a few minutes and try again.",
    UserLambdaValidationException: "Sign-up is limited to email addresses at the organisations this catalog serves.",
  };
  if (error instanceof CognitoError) return sentences[error.type] ?? error.message;
  return explain(error);
}

// ---------------------------------------------------------------------------------------------
// Signed out

// A sign-in Cognito answered with a challenge: an authenticator code (SOFTWARE_TOKEN_MFA) or,
// at an invited account's first sign-in, its own password (NEW_PASSWORD_REQUIRED).
let pending = null;

function showConfirm(email) {
  document.getElementById("confirm").hidden = false;
  document.getElementById("confirm-email").textContent = email;
  document.getElementById("confirm-code").focus();
}

document.getElementById("sign-in").addEventListener("submit", async (event) => {
  event.preventDefault();
  const f = event.target;
  say("Signing in…");
  try {
    let result;
    if (pending?.challenge === "NEW_PASSWORD_REQUIRED") result = await answerNewPassword(pending, f.elements.newPassword.value);
    else if (pending) result = await answerMfa(pending, f.elements.code.value.trim());
    else result = await signIn(f.elements.email.value.trim(), f.elements.password.value);
    document.getElementById("new-password-step").hidden = true;
    document.getElementById("mfa").hidden = true;
    if (result.challenge === "NEW_PASSWORD_REQUIRED") {
      pending = result;
      document.getElementById("new-password-step").hidden = false;
      document.getElementById("in-new-password").focus();
      say("Welcome: you were invited. Choose your own password to finish signing in.");
      return;
    }
    if (result.challenge) {
      pending = result;
      document.getElementById("mfa").hidden = false;
      document.getElementById("in-code").focus();
      say("Enter the code from your authenticator app.");
      return;
    }
    pending = null;
    f.reset();
    say("Signed in.");
    await start();
  } catch (error) {
    say(cognitoSentence(error), true);
    if (error.type === "UserNotConfirmedException") showConfirm(f.elements.email.value.trim());
  }
});

document.getElementById("sign-up").addEventListener("submit", async (event) => {
  event.preventDefault();
  const f = event.target;
  const email = f.elements.email.value.trim();
  say("Creating your account…");
  // A new address and one that already has an account get the same answer, so that the form
  // does not tell anyone who has an account.
  const codeSent = () => {
    document.getElementById("in-email").value = email;
    say("If this email can be used for a new account, we emailed it a code. Enter it to confirm.");
    showConfirm(email);
  };
  try {
    await signUp(email, f.elements.password.value);
    codeSent();
  } catch (error) {
    if (error.type === "UsernameExistsException") codeSent();
    else say(cognitoSentence(error), true);
  }
});

// Codes and resets answer the same whether or not the email has an account (or one waiting
// for confirmation), so that these forms do not tell anyone who has an account.
const CODE_SENT = "If this email has an account waiting for confirmation, we sent it a new code.";
const RESET_SENT = "If this email has an account, we emailed it a code to reset its password.";
// What Cognito says about an address it cannot send to, or an account that does not exist or
// is already confirmed: answered as if it had worked.
const NEUTRAL = new Set(["UserNotFoundException", "InvalidParameterException", "NotAuthorizedException"]);

document.getElementById("resend-code").addEventListener("click", async () => {
  const email = document.getElementById("confirm-email").textContent;
  try {
    await resendCode(email);
    say(CODE_SENT);
  } catch (error) {
    if (NEUTRAL.has(error.type)) say(CODE_SENT);
    else say(cognitoSentence(error), true);
  }
  document.getElementById("confirm-code").focus();
});

let resetting = "";

document.getElementById("forgot-open").addEventListener("click", () => {
  const forgot = document.getElementById("forgot");
  forgot.hidden = false;
  document.getElementById("forgot-email").value = document.getElementById("in-email").value;
  document.getElementById("forgot-email").focus();
});

document.getElementById("forgot").addEventListener("submit", async (event) => {
  event.preventDefault();
  resetting = event.target.elements.email.value.trim();
  try {
    await forgotPassword(resetting);
  } catch (error) {
    if (!NEUTRAL.has(error.type)) {
      say(cognitoSentence(error), true);
      return;
    }
  }
  say(RESET_SENT);
  document.getElementById("reset").hidden = false;
  document.getElementById("reset-code").focus();
});

document.getElementById("reset").addEventListener("submit", async (event) => {
  event.preventDefault();
  const f = event.target;
  try {
    await resetPassword(resetting, f.elements.code.value.trim(), f.elements.password.value);
    f.reset();
    f.hidden = true;
    document.getElementById("forgot").hidden = true;
    document.getElementById("in-email").value = resetting;
    say("Password changed. Sign in with your new password.");
    document.getElementById("in-password").focus();
  } catch (error) {
    // An email without an account has no right code either.
    const type = NEUTRAL.has(error.type) ? "CodeMismatchException" : error.type;
    say(cognitoSentence(Object.assign(error, { type })), true);
  }
});

document.getElementById("confirm").addEventListener("submit", async (event) => {
  event.preventDefault();
  const email = document.getElementById("confirm-email").textContent;
  try {
    await confirmSignUp(email, event.target.elements.code.value.trim());
    event.target.hidden = true;
    say("Email confirmed. Sign in with your password.");
    document.getElementById("in-password").focus();
  } catch (error) {
    say(cognitoSentence(error), true);
  }
});

// ---------------------------------------------------------------------------------------------
// Signed in: the keys

async function token() {
  const s = await session();
  if (!s) {
    await start();
    throw Object.assign(new Error("signed out"), { code: "session" });
  }
  return s.accessToken;
}

const dialog = document.getElementById("revoke-dialog");

function askRevoke(key) {
  document.getElementById("revoke-text").textContent =
    `“${key.label}” (${key.prefix}…) will stop working at once, for every script that uses it. This cannot be undone.`;
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => dialog.addEventListener("close", () => resolve(dialog.returnValue === "revoke"), { once: true }));
}

function keyRow(key) {
  const revoke = key.status === "revoked" ? null : h("button", {
    type: "button", class: "danger", "aria-label": `Revoke ${key.label}`,
    onclick: async () => {
      if (!(await askRevoke(key))) return;
      try {
        await api(`/account/keys/${encodeURIComponent(key.id)}`, { method: "DELETE", token: await token() });
        forgetKey(key.id);
        say(`Revoked “${key.label}”.`);
        await list();
      } catch (error) {
        if (refusedToken(error)) await sessionRefused(error);
        else say(explain(error), true);
      }
    },
  }, "Revoke");
  const statusText = { active: "Active", expired: "Expired", revoked: `Revoked ${humanDate(key.revoked_at)}` }[key.status];
  // data-label names each cell where a narrow screen shows a row as a card (style.css).
  return h("tr", {},
    h("td", { "data-label": "Name" }, key.label), h("td", { "data-label": "Key" }, h("code", {}, `${key.prefix}…`)),
    h("td", { "data-label": "Created" }, humanDate(key.created_at)),
    h("td", { "data-label": "Expires" }, humanDate(key.expires_at)),
    h("td", { "data-label": "Last used" }, key.last_used_at ? humanDate(key.last_used_at) : "never"),
    h("td", { "data-label": "Status" }, statusText), h("td", {}, revoke));
}

const PAGE_SIZE = 50;
// The number of the latest list asked for: an earlier one answered later is dropped.
let latestList = 0;

/** The account's keys, newest first: the first page, or (`more`) the next one appended. */
async function list(more = false) {
  const asked = ++latestList;
  const tbody = document.getElementById("keys");
  const page = more ? Number(tbody.dataset.page ?? "1") + 1 : 1;
  const body = await api(`/account/keys?page=${page}&page_size=${PAGE_SIZE}`, { token: await token() });
  if (asked !== latestList) return body;
  const rows = body.keys.map(keyRow);
  if (more) tbody.append(...rows);
  else tbody.replaceChildren(...(rows.length ? rows : [h("tr", {}, h("td", { colspan: 7 }, "No keys yet."))]));
  tbody.dataset.page = String(page);
  const older = document.getElementById("older-keys");
  const shown = (page - 1) * PAGE_SIZE + body.keys.length;
  older.hidden = shown >= body.total;
  older.textContent = `Show older keys (${body.total - shown} more)`;
  // The limit is the API's: until it answers, the sentence reads "a limited number of".
  if (Number.isInteger(body.max_active)) document.getElementById("max-active").textContent = String(body.max_active);
  return body;
}

/** The account's requests and grants, each with its standing in a sentence. */
async function listAccess() {
  const records = (await myAccess()) ?? [];
  const items = records.map((r) => h("li", {},
    h("a", { href: `dataset.html?slug=${encodeURIComponent(r.dataset)}` }, slugText(r.dataset)), ": ", standing(r)));
  document.getElementById("access-list").replaceChildren(
    ...(items.length ? items : [h("li", {}, "You have not asked for access to any dataset.")]));
}

// ---------------------------------------------------------------------------------------------
// Emails about access (GET|PUT /account/preferences)

const emailsOn = document.getElementById("emails-on");

async function showPreferences() {
  const body = await api("/account/preferences", { token: await token() });
  emailsOn.checked = body.emails !== false;
}

emailsOn.addEventListener("change", async () => {
  const wanted = emailsOn.checked;
  emailsOn.disabled = true;
  try {
    const body = await api("/account/preferences", { method: "PUT", token: await token(), body: { emails: wanted } });
    emailsOn.checked = body.emails !== false;
    say(body.emails ? "You will get emails about your access." : "You will get no more emails about your access.");
  } catch (error) {
    emailsOn.checked = !wanted;
    if (refusedToken(error)) await sessionRefused(error);
    else say(explain(error), true);
  } finally {
    emailsOn.disabled = false;
  }
});

document.getElementById("older-keys").addEventListener("click", async () => {
  try {
    await list(true);
  } catch (error) {
    if (refusedToken(error)) await sessionRefused(error);
    else say(explain(error), true);
  }
});

/** A Delta Sharing profile file for a new key, as a download link's URL: the server's endpoint,
 * the key as bearer token, its expiry (the file catalog-admin keys create --sharing-profile
 * writes). */
async function sharingProfileUrl(secret, expiresAt) {
  const { apiBase } = await config();
  const endpoint = new URL(`${apiBase.replace(/\/$/, "")}/delta-sharing`, location.href).href;
  const profile = { shareCredentialsVersion: 1, endpoint, bearerToken: secret };
  if (expiresAt) profile.expirationTime = expiresAt;
  const blob = new Blob([JSON.stringify(profile, null, 2) + "\n"], { type: "application/json" });
  return URL.createObjectURL(blob);
}

document.getElementById("create").addEventListener("submit", async (event) => {
  event.preventDefault();
  const f = event.target;
  const created = document.getElementById("created");
  try {
    const body = await api("/account/keys", {
      method: "POST",
      token: await token(),
      body: { label: f.elements.label.value.trim(), expires_in_days: Number(f.elements.expiry.value) },
    });
    if (f.elements.use.checked) rememberKey(body.key.id, body.key.label, body.secret);
    const secret = h("input", { type: "text", id: "new-secret", readonly: true, value: body.secret, "aria-label": "Your new API key", class: "mono" });
    const copyButton = h("button", { type: "button", onclick: () => copy(copyButton, body.secret) }, "Copy");
    const profile = h("a", {
      id: "sharing-profile",
      href: await sharingProfileUrl(body.secret, body.key.expires_at),
      download: `${body.key.label.replace(/[^\w.-]+/g, "-") || "catalog"}.share`,
    }, "Download its Delta Sharing profile");
    created.replaceChildren(h("div", { class: "notice", role: "alert" },
      h("p", {}, h("strong", {}, `Your new key “${body.key.label}”. `), "Copy it now: it is shown only this once, and we keep no copy we could show you again."),
      h("div", { class: "row" }, secret, copyButton),
      h("p", {}, `It expires ${humanDate(body.key.expires_at)}. `, profile,
        " (a file for Delta Sharing clients: pandas, Spark, Power BI; it holds the key).")));
    secret.focus();
    secret.select();
    f.reset();
    say("");
    await list();
  } catch (error) {
    if (refusedToken(error)) await sessionRefused(error);
    else say(explain(error), true);
  }
});

// ---------------------------------------------------------------------------------------------
// Two-factor sign-in (an authenticator app)

const mfaToggle = document.getElementById("mfa-toggle");
const mfaSetup = document.getElementById("mfa-setup");

async function showMfa() {
  const s = await session();
  const on = await mfaEnabled(s.accessToken);
  document.getElementById("mfa-state").textContent = on
    ? "On: signing in asks for a code from your authenticator app."
    : "Off: signing in asks for your password only.";
  mfaToggle.textContent = on ? "Turn off two-factor sign-in" : "Turn on two-factor sign-in";
  mfaToggle.dataset.on = on ? "1" : "";
  mfaToggle.hidden = false;
  mfaSetup.hidden = true;
}

const mfaOff = document.getElementById("mfa-off");

mfaToggle.addEventListener("click", async () => {
  try {
    const s = await session();
    if (mfaToggle.dataset.on) {
      // Turning it off asks for the password again: a token alone (a tab left open) must not
      // be enough to weaken the account.
      mfaOff.hidden = false;
      mfaToggle.hidden = true;
      document.getElementById("mfa-password").focus();
      return;
    }
    const secret = await startMfa(s.accessToken);
    document.getElementById("mfa-secret").textContent = secret;
    document.getElementById("mfa-link").href =
      `otpauth://totp/Dataset%20catalog:${encodeURIComponent(s.email)}?secret=${secret}&issuer=Dataset%20catalog`;
    mfaSetup.hidden = false;
    mfaToggle.hidden = true;
    document.getElementById("mfa-code").focus();
  } catch (error) {
    say(cognitoSentence(error), true);
  }
});

mfaOff.addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    const s = await session();
    if (!(await checkPassword(s.email, event.target.elements.password.value))) {
      say("That password is not right: two-factor sign-in stays on.", true);
      document.getElementById("mfa-password").select();
      return;
    }
    await stopMfa(s.accessToken);
    event.target.reset();
    mfaOff.hidden = true;
    await showMfa();
    say("Two-factor sign-in is off.");
  } catch (error) {
    say(cognitoSentence(error), true);
  }
});

document.getElementById("mfa-keep").addEventListener("click", () => {
  mfaOff.reset();
  mfaOff.hidden = true;
  mfaToggle.hidden = false;
  mfaToggle.focus();
});

document.getElementById("mfa-verify").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    const s = await session();
    await finishMfa(s.accessToken, document.getElementById("mfa-code").value.trim());
    event.target.reset();
    await showMfa();
    say("Two-factor sign-in is on.");
  } catch (error) {
    say(cognitoSentence(error), true);
  }
});

// ---------------------------------------------------------------------------------------------

/** The sign-up form as the stack's sign-up mode has it: by invitation, no form. */
async function signUpMode() {
  const { signUpMode: mode = "open" } = await config();
  const note = document.getElementById("sign-up-note");
  const form = document.getElementById("sign-up");
  if (mode === "invite") {
    form.replaceChildren(h("h2", { id: "sign-up-title" }, "Create an account"),
      h("p", { id: "sign-up-note" }, "Accounts here are by invitation: ask the catalog's operators for one. The invitation email holds a temporary password; sign in with it and choose your own."));
  } else if (mode === "domains") {
    note.textContent = "Sign-up is open to email addresses at the organisations this catalog serves.";
    note.hidden = false;
  }
}

/** The API refused the session's token (expired, revoked, or from another pool): the session
 * ends in this tab, and the page offers to sign in again, saying why. */
async function sessionRefused(error) {
  endSession();
  await start();
  say(explain(error), true);
}

const refusedToken = (error) => error.code === "session" || error.code === "invalid_token";

async function start() {
  await header();
  await signUpMode();
  let s;
  try {
    s = await session();
  } catch (error) {
    // Cognito could not be reached: still signed in, nothing to show until it can be.
    document.getElementById("signed-out").hidden = true;
    document.getElementById("signed-in").hidden = true;
    say(cognitoSentence(error), true);
    return;
  }
  document.getElementById("signed-out").hidden = Boolean(s);
  document.getElementById("signed-in").hidden = !s;
  if (!s) {
    if (location.hash === "#sign-up") document.getElementById("up-email").focus();
    return;
  }
  try {
    await list();
    await listAccess();
    await showMemberships(token, say, sessionRefused);
    await showPreferences();
    await showMfa();
  } catch (error) {
    if (refusedToken(error)) await sessionRefused(error);
    else say(error instanceof CognitoError ? cognitoSentence(error) : explain(error), true);
  }
}

start();
