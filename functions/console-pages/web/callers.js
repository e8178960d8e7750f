// Callers: an admin's view (console.md, "Callers"): #callers lists the
// callers with their token and order counts and creates one;
// #callers/<owner> also shows that caller: issue a token, Live or Test
// (shown once, with its mode and a Copy button), its tokens with their
// modes, revoke one; and its Account (accounts.js). A caller's name is no personal
// data (it names a client system), so it may be in the URL; a token never
// is, nor in storage: it lives in the page only until the person leaves
// the caller, issues another or signs out.
import { $, el, api, register } from "./core.js";
import { loadAccount, clearAccount } from "./accounts.js";

// OWNER is the rule the callers' workflow enforces (auth.ValidOwner), with
// its message, checked before a create is sent.
const OWNER = /^[A-Za-z0-9._-]{1,64}$/;
const OWNER_RULE = "A caller's name (owner) is 1 to 64 ASCII letters, digits, '.', '_' or '-'.";

const path = (owner) => "/api/console/callers/" + encodeURIComponent(owner);
const when = (t) => (t ? new Date(t).toLocaleString() : "—");
// MODES are the words the page shows for a token's mode (the API's
// "live" or "test").
const MODES = { live: "Live", test: "Test" };
const modeOf = (t) => MODES[t.mode] || t.mode;

let shown = ""; // the caller whose panel is open
let created = ""; // the caller just created, whose panel opens next

async function load(arg) {
  const list = (await api("GET", "/api/console/callers")).data;
  $("caller-rows").replaceChildren(...list.map((c) => el("tr", {},
    el("td", {}, el("a", { href: "#callers/" + encodeURIComponent(c.owner), text: c.owner,
      ...(c.owner === arg ? { "aria-current": "true" } : {}) })),
    el("td", { text: c.activeTokens + " active, " + c.revokedTokens + " revoked" }),
    el("td", { text: String(c.orders) }),
    el("td", { text: when(c.createdAt) + (c.createdBy ? " by " + c.createdBy : "") }))));
  $("callers-empty").hidden = list.length > 0;
  shown = arg;
  $("caller").hidden = !arg;
  if (!arg) return;
  $("caller-h").textContent = "Caller " + arg;
  await loadTokens(arg);
  await loadAccount(arg);
  if (arg === created) {
    created = "";
    $("status").textContent = "Caller " + arg + " created: issue its token.";
    $("issue").focus();
  }
}

async function loadTokens(owner) {
  const tokens = (await api("GET", path(owner) + "/tokens")).data;
  $("caller-tokens-caption").textContent = "Tokens of " + owner + ", oldest first";
  $("token-rows").replaceChildren(...tokens.map(tokenRow));
  $("tokens-empty").hidden = tokens.length > 0;
}

function tokenRow(t) {
  const state = el("td", { text: t.revokedAt ? "Revoked " + when(t.revokedAt) : "Active" });
  const id = el("td", {}, el("code", { id: "tok-" + t.id, text: t.id }));
  const action = el("td");
  if (!t.revokedAt) action.append(revokeButton(t, action, state));
  return el("tr", {}, id, el("td", { text: modeOf(t) }), el("td", { text: when(t.createdAt) }), el("td", { text: t.createdBy || "—" }), state, action);
}

// revokeButton asks once more before revoking: a revoked token cannot be
// brought back, and the caller's requests with it fail within 5 seconds.
function revokeButton(t, cell, state) {
  const b = el("button", { type: "button", text: "Revoke", "aria-describedby": "tok-" + t.id });
  b.addEventListener("click", () => {
    const q = el("p", { id: "confirm-" + t.id, text: "Revoke " + t.id + "? Requests with it fail within 5 seconds; it cannot be undone." });
    const yes = el("button", { type: "button", class: "danger", text: "Yes, revoke", "aria-describedby": q.id });
    const no = el("button", { type: "button", text: "Keep it" });
    no.addEventListener("click", () => { cell.replaceChildren(revokeButton(t, cell, state)); cell.querySelector("button").focus(); });
    yes.addEventListener("click", async () => {
      try {
        const r = (await api("POST", "/api/console/tokens/" + encodeURIComponent(t.id) + "/revoke")).data;
        state.textContent = "Revoked " + when(r.revokedAt);
        cell.replaceChildren();
        await load(shown);
        $("status").textContent = "Token " + t.id + " revoked: it stops working within 5 seconds.";
        $("tokens-region").focus();
      } catch (e) { $("status").textContent = e.message; }
    });
    cell.replaceChildren(q, yes, no);
    yes.focus();
  });
  return b;
}

async function create(ev) {
  ev.preventDefault();
  const input = $("owner"), err = $("owner-e");
  const owner = input.value.trim();
  const ok = OWNER.test(owner);
  err.textContent = ok ? "" : OWNER_RULE;
  input.setAttribute("aria-invalid", ok ? "false" : "true");
  if (!ok) { input.focus(); return; }
  try {
    await api("POST", "/api/console/callers", { owner });
    input.value = "";
    created = owner;
    location.hash = "#callers/" + encodeURIComponent(owner);
  } catch (e) {
    err.textContent = e.message;
    input.setAttribute("aria-invalid", "true");
    input.focus();
  }
}

// issue issues a token of the mode chosen (Live unless Test is checked)
// and shows it once, saying which mode it is.
async function issue() {
  const owner = shown;
  const test = $("mode-test").checked;
  try {
    const t = (await api("POST", path(owner) + "/tokens", { test })).data;
    $("issued-mode").textContent = t.mode === "test"
      ? "Test token: it sees only " + owner + "'s test orders, never its live ones."
      : "Live token: it sees " + owner + "'s live orders.";
    $("issued-token").value = t.token;
    $("issued-copied").textContent = "";
    $("issued").hidden = false;
    $("issued-token").focus();
    $("issued-token").select();
    await load(owner);
  } catch (e) { $("status").textContent = e.message; }
}

async function copy() {
  try {
    await navigator.clipboard.writeText($("issued-token").value);
    $("issued-copied").textContent = "Copied.";
  } catch {
    $("issued-token").select();
    $("issued-copied").textContent = "The browser did not let the page copy: the token is selected, copy it with the keyboard.";
  }
}

// clearIssued forgets the token shown and puts the mode back to Live,
// the usual choice, so that a test token is always chosen on purpose.
function clearIssued() {
  $("issued-token").value = "";
  $("issued-mode").textContent = "";
  $("mode-live").checked = true;
  $("issued-copied").textContent = "";
  $("issued").hidden = true;
}

function clear() {
  clearIssued();
  shown = "";
  $("caller-rows").replaceChildren();
  $("token-rows").replaceChildren();
  $("owner").value = "";
  $("owner-e").textContent = "";
  clearAccount();
}

$("caller-form").addEventListener("submit", create);
$("owner").addEventListener("input", () => {
  const v = $("owner").value.trim();
  if (v === "" || OWNER.test(v)) { $("owner-e").textContent = ""; $("owner").setAttribute("aria-invalid", "false"); }
});
// The token is shown once: leaving the caller's panel (another view,
// another caller, Back) forgets it.
window.addEventListener("hashchange", clearIssued);
$("issue").addEventListener("click", issue);
$("issued-copy").addEventListener("click", copy);

register("callers", { title: "Callers", admin: true, load, clear });
