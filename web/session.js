// Accounts: Amazon Cognito's own JSON API, called from the page (no SDK needed); the signed-in
// session and the API keys this tab may use, both in the tab's sessionStorage.
import { config } from "./api.js";

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

/** An email as accounts are named: lowercase (the sign-up trigger refuses capitals, so that one
 * mailbox is one account whatever case it is typed in). */
export function accountEmail(email) {
  return email.trim().toLowerCase();
}

export async function signUp(email, password) {
  const { userPoolClientId } = await config();
  const name = accountEmail(email);
  await cognito("SignUp", {
    ClientId: userPoolClientId,
    Username: name,
    Password: password,
    UserAttributes: [{ Name: "email", Value: name }],
  });
}

export async function confirmSignUp(email, code) {
  const { userPoolClientId } = await config();
  await cognito("ConfirmSignUp", { ClientId: userPoolClientId, Username: accountEmail(email), ConfirmationCode: code });
}

/** Whether `password` is the account's: Cognito checks it before anything else of a sign-in,
 * so a token or an MFA challenge both say yes (the new session, if any, is not kept). */
export async function checkPassword(email, password) {
  const { userPoolClientId } = await config();
  try {
    await cognito("InitiateAuth", {
      ClientId: userPoolClientId,
      AuthFlow: "USER_PASSWORD_AUTH",
      AuthParameters: { USERNAME: email, PASSWORD: password },
    });
    return true;
  } catch (error) {
    if (error.type === "NotAuthorizedException") return false;
    throw error;
  }
}

/** Sends a new confirmation code to an account that has not confirmed its email yet. */
export async function resendCode(email) {
  const { userPoolClientId } = await config();
  await cognito("ResendConfirmationCode", { ClientId: userPoolClientId, Username: accountEmail(email) });
}

/** Emails a code to reset the account's password. */
export async function forgotPassword(email) {
  const { userPoolClientId } = await config();
  await cognito("ForgotPassword", { ClientId: userPoolClientId, Username: accountEmail(email) });
}

/** Sets a new password with the emailed code. */
export async function resetPassword(email, code, password) {
  const { userPoolClientId } = await config();
  await cognito("ConfirmForgotPassword", {
    ClientId: userPoolClientId, Username: accountEmail(email), ConfirmationCode: code, Password: password,
  });
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

/** Signs in; returns the session, or `{challenge, ...}` when Cognito asks for an MFA code
 * (`SOFTWARE_TOKEN_MFA`) or, at an invited account's first sign-in, a new password
 * (`NEW_PASSWORD_REQUIRED`). */
export async function signIn(typed, password) {
  const { userPoolClientId } = await config();
  const attempt = (email) => cognito("InitiateAuth", {
    ClientId: userPoolClientId,
    AuthFlow: "USER_PASSWORD_AUTH",
    AuthParameters: { USERNAME: email, PASSWORD: password },
  });
  // Accounts are named in lowercase; one made before that rule keeps the case it was made with.
  let email = accountEmail(typed);
  let out;
  try {
    out = await attempt(email);
  } catch (error) {
    if (typed.trim() === email || !["NotAuthorizedException", "UserNotFoundException"].includes(error.type)) throw error;
    email = typed.trim();
    out = await attempt(email);
  }
  if (out.ChallengeName) return { challenge: out.ChallengeName, session: out.Session, email };
  return keep(out.AuthenticationResult, email);
}

async function answer(pending, responses) {
  const { userPoolClientId } = await config();
  const out = await cognito("RespondToAuthChallenge", {
    ClientId: userPoolClientId,
    ChallengeName: pending.challenge,
    Session: pending.session,
    ChallengeResponses: { USERNAME: pending.email, ...responses },
  });
  if (out.ChallengeName) return { challenge: out.ChallengeName, session: out.Session, email: pending.email };
  return keep(out.AuthenticationResult, pending.email);
}

/** Answers the MFA challenge of `signIn` with the authenticator app's code. */
export function answerMfa(pending, code) {
  return answer(pending, { SOFTWARE_TOKEN_MFA_CODE: code });
}

/** Answers the first sign-in of an invited account (NEW_PASSWORD_REQUIRED): its own password
 * replaces the emailed temporary one. May be followed by the MFA challenge. */
export function answerNewPassword(pending, password) {
  return answer(pending, { NEW_PASSWORD: password });
}

/** The session this tab holds, as stored (no network call): what the header shows. */
export function storedSession() {
  const raw = sessionStorage.getItem(SESSION);
  return raw ? JSON.parse(raw) : null;
}

// Cognito's answers to a refresh that mean the session is over (the refresh token expired or
// was revoked, the account is gone or disabled); anything else (no network, a 5xx, throttling)
// is worth retrying, and keeps the session.
const ENDED = new Set(["NotAuthorizedException", "UserNotFoundException", "InvalidParameterException"]);

/** The signed-in session with a fresh access token, or null when there is none or Cognito says
 * it has ended. When Cognito cannot be reached (after three tries), the session is kept — with
 * the keys this tab holds — and this throws a CognitoError of type `Unreachable`. */
export async function session() {
  const s = storedSession();
  if (!s) return null;
  if (s.expiresAt - Date.now() > 60_000) return s;
  const { userPoolClientId } = await config();
  for (let attempt = 0; ; attempt += 1) {
    try {
      const out = await cognito("InitiateAuth", {
        ClientId: userPoolClientId,
        AuthFlow: "REFRESH_TOKEN_AUTH",
        AuthParameters: { REFRESH_TOKEN: s.refreshToken },
      });
      return keep(out.AuthenticationResult, s.email, s.refreshToken);
    } catch (error) {
      if (ENDED.has(error.type)) {
        signOutLocally();
        return null;
      }
      // Still valid for a while: use it, and refresh on a later call.
      if (s.expiresAt > Date.now()) return s;
      if (attempt === 2) {
        throw new CognitoError("Unreachable", "The sign-in service could not be reached. You are still signed in: try again in a moment.");
      }
      await new Promise((resolve) => setTimeout(resolve, 400 * 2 ** attempt));
    }
  }
}

/** Ends the session in this tab only (the API refused its token): the keys it held go too. */
export function endSession() {
  signOutLocally();
}

function signOutLocally() {
  sessionStorage.removeItem(SESSION);
  sessionStorage.removeItem(KEYS);
}

export async function signOut() {
  const raw = sessionStorage.getItem(SESSION);
  signOutLocally();
  if (!raw) return;
  // Ends the account's sessions (its refresh tokens); an access token lapses within 15 minutes.
  await cognito("GlobalSignOut", { AccessToken: JSON.parse(raw).accessToken }).catch(() => {});
}

/** A session's access token's claims, as it carries them (not checked: the API checks them). */
function claimsOf(s) {
  try {
    const payload = s.accessToken.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(payload.padEnd(Math.ceil(payload.length / 4) * 4, "=")));
  } catch {
    return {};
  }
}

/** Whether a session's access token names the operators' group (its `cognito:groups` claim;
 * the API checks the same claim, so this only decides which links to show). */
export async function isOperator(s) {
  const { operatorsGroup } = await config();
  if (!s || !operatorsGroup) return false;
  const groups = claimsOf(s)["cognito:groups"];
  return Array.isArray(groups) && groups.includes(operatorsGroup);
}

/** The session's account id (its access token's `sub`, which the API names accounts by). */
export function accountOf(s) {
  return s ? claimsOf(s).sub ?? null : null;
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
