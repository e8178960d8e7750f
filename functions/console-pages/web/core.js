// The staff console's core: sign-in, the session, the API and the views'
// router; no framework, no build step (functions/console-pages/DECISIONS.md).
// It signs in straight to Cognito (InitiateAuth, USER_PASSWORD_AUTH;
// REFRESH_TOKEN_AUTH to renew), keeps the tokens in this module's memory
// only (never web storage or a URL), and calls the console's JSON endpoints
// (/api/console/...) with the id token. Each view is a section of the one
// page, in a module of its own that registers it (register), chosen by the
// URL's #fragment: #<view>/<arg> (ids only: no personal data in a URL).

export const $ = (id) => document.getElementById(id);
export const el = (tag, props = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "text") e.textContent = v;
    else if (k in e && typeof v !== "string") e[k] = v;
    else e.setAttribute(k, v);
  }
  e.append(...children.filter((c) => c !== null && c !== undefined));
  return e;
};

// session is the signed-in person: tokens in memory only.
export const session = { id: "", refresh: "", expires: 0, username: "", me: null };
let cfg = null;
// waiting are the requests held while the person signs in again.
let waiting = [];
let challenge = null;

class CognitoError extends Error {
  constructor(type, message) { super(message || type); this.type = type; }
}

async function cognito(target, body) {
  const r = await fetch(cfg.endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "AWSCognitoIdentityProviderService." + target },
    body: JSON.stringify(body),
  });
  const j = await r.json().catch(() => ({}));
  if (!r.ok) throw new CognitoError(String(j.__type || r.status).split("#").pop(), j.message);
  return j;
}

function signedIn(result) {
  session.id = result.IdToken;
  if (result.RefreshToken) session.refresh = result.RefreshToken;
  session.expires = Date.now() + (result.ExpiresIn || 3600) * 1000;
}

// answer handles InitiateAuth's or RespondToAuthChallenge's answer: tokens,
// or the challenge the person must meet first.
async function answer(a) {
  if (a.AuthenticationResult) { signedIn(a.AuthenticationResult); return afterSignIn(); }
  challenge = { name: a.ChallengeName, session: a.Session };
  for (const f of ["signin-form", "newpw-form", "totp-form"]) $(f).hidden = true;
  switch (a.ChallengeName) {
    case "NEW_PASSWORD_REQUIRED":
      $("newpw-form").hidden = false; $("newpw").focus(); return;
    case "SOFTWARE_TOKEN_MFA":
      $("totp-setup").hidden = true; $("totp-form").hidden = false; $("totp").focus(); return;
    case "MFA_SETUP": {
      const s = await cognito("AssociateSoftwareToken", { Session: a.Session });
      challenge.session = s.Session;
      $("totp-secret").textContent = s.SecretCode;
      $("totp-setup").hidden = false; $("totp-form").hidden = false; $("totp").focus(); return;
    }
    default:
      throw new CognitoError("Unsupported", "This account needs a sign-in step the console does not support (" + a.ChallengeName + ").");
  }
}

function respond(responses) {
  return cognito("RespondToAuthChallenge", {
    ChallengeName: challenge.name, ClientId: cfg.clientId, Session: challenge.session,
    ChallengeResponses: { USERNAME: session.username, ...responses },
  });
}

// WRONG_SIGN_IN are the answers to a wrong email or password: Cognito's
// NotAuthorizedException (UserNotFoundException when the pool reveals it),
// and cognito-local's InvalidPasswordException.
const WRONG_SIGN_IN = ["NotAuthorizedException", "UserNotFoundException", "InvalidPasswordException"];

export function say(where, err, signingIn = false) {
  const m = signingIn && err instanceof CognitoError && WRONG_SIGN_IN.includes(err.type)
    ? "Wrong email or password." : (err.message || String(err));
  $(where).textContent = m;
}

async function refresh() {
  if (!session.refresh) return false;
  try {
    const a = await cognito("InitiateAuth", { AuthFlow: "REFRESH_TOKEN_AUTH", ClientId: cfg.clientId, AuthParameters: { REFRESH_TOKEN: session.refresh } });
    signedIn(a.AuthenticationResult);
    return true;
  } catch { return false; }
}

// signInAgain shows the sign-in form over the open view, which stays as it
// is (with what was typed into it), and resolves once signed in again.
function signInAgain() {
  session.id = ""; session.refresh = "";
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (waiting.length > 1) return;
    for (const s of [...views.keys(), "nothing"]) $(s).hidden = true;
    $("signin-why").hidden = false;
    showSignIn();
  });
}

// showSignIn shows the sign-in form alone: signed out, the next person at
// the screen sees nothing of the last one's views (an order's parties).
function showSignIn() {
  for (const s of ["nothing", ...views.keys()]) $(s).hidden = true;
  $("signin").hidden = false;
  for (const f of ["newpw-form", "totp-form"]) $(f).hidden = true;
  $("signin-form").hidden = false;
  $("password").value = "";
  $("signout").hidden = true;
  $("email").focus();
}

async function afterSignIn() {
  $("signin").hidden = true; $("signin-why").hidden = true;
  $("signout").hidden = false;
  challenge = null;
  if (waiting.length) {
    const w = waiting; waiting = [];
    show(location.hash);
    w.forEach((resolve) => resolve());
    return;
  }
  session.me = (await api("GET", "/api/console/me")).data;
  $("who").textContent = session.me.email;
  route();
}

// api calls a console endpoint with the id token; an ended session (401,
// or a token that cannot be renewed) asks the person to sign in again and
// then sends the request again.
export async function api(method, path, body, headers = {}, text = false) {
  for (let attempt = 0; ; attempt++) {
    if (!session.id || Date.now() > session.expires - 30000) {
      if (!(await refresh())) await signInAgain();
    }
    const init = { method, headers: { Authorization: "Bearer " + session.id, ...headers } };
    if (body instanceof Blob) init.body = body;
    else if (body !== undefined) { init.body = JSON.stringify(body); init.headers["Content-Type"] = "application/json"; }
    const r = await fetch(path, init);
    if (r.status === 401 && attempt < 2) {
      session.expires = 0;
      if (!(await refresh())) await signInAgain();
      continue;
    }
    if (text && r.ok) return r.text(); // a file the page saves (an account's CSV)
    const j = await r.json().catch(() => ({}));
    if (!r.ok) {
      const e = new Error((j.error && j.error.message) || "The request failed (" + r.status + ").");
      e.status = r.status; e.body = j;
      throw e;
    }
    return j;
  }
}

// views are the console's views by name, as register adds them, in the
// order of the header's navigation.
const views = new Map();

// register adds a view: the section whose id is name, shown for #name and
// #name/<arg>. load(arg) fills it (its errors are shown in the status
// line); title, when given, puts it in the header's navigation; admin
// limits it to admins (the server checks the role again); clear() empties
// what it shows when the person signs out; the first view registered is
// the one an empty #fragment shows.
export function register(name, { load, title = "", admin = false, clear = () => {} }) {
  views.set(name, { load, title, admin, clear });
}

function groups() { return (session.me && session.me.groups) || []; }
function isAdmin() { return groups().includes("admin"); }
function canWork() { return groups().includes("operator") || isAdmin(); }

// navigation lists the views the signed-in person may open: none for a
// person signed out or in neither group.
function navigation(current) {
  const items = [...views].filter(([, v]) => v.title && canWork() && (!v.admin || isAdmin()))
    .map(([name, v]) => el("li", {}, el("a", { href: "#" + name, text: v.title, ...(name === current ? { "aria-current": "page" } : {}) })));
  $("nav").replaceChildren(...items);
  $("nav-wrap").hidden = items.length === 0;
}

function show(hash) {
  for (const s of ["signin", "nothing", ...views.keys()]) $(s).hidden = true;
  if (!canWork()) { navigation(""); $("nothing").hidden = false; return null; }
  const i = hash.indexOf("/");
  let name = (i < 0 ? hash : hash.slice(0, i)).replace(/^#/, "");
  const arg = i < 0 ? "" : decodeURIComponent(hash.slice(i + 1));
  const v = views.get(name);
  if (!v || (v.admin && !isAdmin())) name = views.keys().next().value;
  navigation(name);
  $(name).hidden = false;
  return { name, view: views.get(name), arg };
}

// route shows the view the #fragment names and loads it. The view is
// aria-busy while it loads: what it shows until then is the last visit's,
// and a button pressed in it (a Revoke of the old rows) would be replaced
// by the fresh rows, its confirmation with it. Assistive technology waits
// for a busy region, and so does the console's browser test kit.
export async function route() {
  $("status").textContent = "";
  if (!session.id) { navigation(""); showSignIn(); return; }
  const v = show(location.hash);
  if (!v) return;
  const section = $(v.name);
  section.setAttribute("aria-busy", "true");
  try { await v.view.load(v.arg); } catch (e) { $("status").textContent = e.message; }
  finally { section.removeAttribute("aria-busy"); }
}

// start signs the person in and shows the view the #fragment names.
export async function start() {
  cfg = await (await fetch("/console/config.json")).json();
  $("signin-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    $("signin-error").textContent = "";
    session.username = $("email").value.trim();
    try {
      await answer(await cognito("InitiateAuth", { AuthFlow: "USER_PASSWORD_AUTH", ClientId: cfg.clientId,
        AuthParameters: { USERNAME: session.username, PASSWORD: $("password").value } }));
    } catch (e) { say("signin-error", e, true); }
    $("password").value = "";
  });
  $("newpw-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try { await answer(await respond({ NEW_PASSWORD: $("newpw").value })); } catch (e) { say("newpw-error", e); }
    $("newpw").value = "";
  });
  $("totp-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const code = $("totp").value.trim();
    try {
      if (challenge.name === "MFA_SETUP") {
        const v = await cognito("VerifySoftwareToken", { Session: challenge.session, UserCode: code });
        challenge.session = v.Session;
        await answer(await respond({}));
      } else await answer(await respond({ SOFTWARE_TOKEN_MFA_CODE: code }));
    } catch (e) { say("totp-error", e); }
    $("totp").value = "";
  });
  $("signout").addEventListener("click", async () => {
    const token = session.refresh;
    session.id = ""; session.refresh = ""; session.me = null;
    $("who").textContent = "";
    for (const v of views.values()) v.clear();
    navigation("");
    if (token) await cognito("RevokeToken", { Token: token, ClientId: cfg.clientId }).catch(() => {});
    location.hash = "";
    showSignIn();
  });
  window.addEventListener("hashchange", () => { if (!waiting.length) route(); });
  route();
}

