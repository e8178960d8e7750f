// Account: an admin's section of the caller view (accounts.md, "Staff"):
// Balance, Held, Available, Credit limit; the entries, newest first, by
// page, with Download CSV; the forms Record credit, Record adjustment and
// Save limit, each confirmed before it is sent, with its outcome in the
// status line and a refusal beside the field it names. The Callers view
// is an admin's only, and the server refuses an operator these routes.
import { $, el, api } from "./core.js";

const MONEY = /^(0|[1-9][0-9]{0,14})\.[0-9]{2}$/;
const SIGNED = /^-?(0|[1-9][0-9]{0,14})\.[0-9]{2}$/;
const MONEY_RULE = "Rupees with exactly two decimals, such as 1000.00.";
const PAGE = 10;

const path = (owner) => "/api/console/accounts/" + encodeURIComponent(owner);
const when = (t) => (t ? new Date(t).toLocaleString() : "—");

// indian writes a money string as a person in India reads it: ₹1,20,000.00.
export function indian(m) {
  if (m === null || m === undefined) return "—";
  const neg = m.startsWith("-");
  const [whole, frac] = (neg ? m.slice(1) : m).split(".");
  let head = whole.slice(0, -3), out = whole.slice(-3);
  while (head.length > 0) { out = head.slice(-2) + "," + out; head = head.slice(0, -2); }
  return (neg ? "-" : "") + "₹" + out + "." + frac;
}

let owner = ""; // the caller whose account is shown
let page = 1;
let adjustKey = ""; // the Idempotency-Key of the adjustment being confirmed

export async function loadAccount(name) {
  owner = name;
  page = 1;
  clearForms();
  $("account-status").textContent = "";
  await refresh();
}

async function refresh() {
  const a = (await api("GET", path(owner))).data;
  const facts = [["Balance", indian(a.balance)], ["Held", indian(a.held)],
    ["Available", a.available === null ? "Unlimited" : indian(a.available)],
    ["Credit limit", a.creditLimit === null ? "Unlimited" : indian(a.creditLimit)]];
  $("account-facts").replaceChildren(...facts.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })]));
  await loadEntries();
}

async function loadEntries() {
  const r = await api("GET", path(owner) + "/entries?pagination[pageSize]=" + PAGE + "&pagination[page]=" + page);
  $("entry-rows").replaceChildren(...r.data.map((e) => el("tr", {},
    el("td", { text: when(e.createdAt) }), el("td", { text: e.type }), el("td", { text: e.amount }),
    el("td", { text: e.balanceAfter }), el("td", { text: e.heldAfter }),
    el("td", {}, e.order ? el("a", { href: "#order/" + encodeURIComponent(e.order), text: e.order }) : el("span", { text: "—" })),
    el("td", { text: e.reference || "—" }), el("td", { text: e.note || "—" }), el("td", { text: e.by }))));
  const p = r.meta.pagination;
  $("entries-caption").textContent = "Entries, newest first: page " + p.page + " of " + Math.max(p.pageCount, 1);
  $("entries-empty").hidden = r.data.length > 0;
  $("entries-newer").disabled = p.page <= 1;
  $("entries-older").disabled = p.page >= p.pageCount;
}

// fieldErrors shows an API refusal beside the fields it names (the ids
// are prefix + "-" + the field, as the path names it); what names no
// field of the form goes to the status line. It returns the first field
// shown, for focus.
function fieldErrors(prefix, e, fields) {
  const errs = (e.body && e.body.error && e.body.error.details && e.body.error.details.errors) || [];
  let first = null;
  for (const fe of errs) {
    const name = fields[(fe.path || [])[0]];
    if (!name) continue;
    $(prefix + "-" + name + "-e").textContent = fe.message;
    $(prefix + "-" + name).setAttribute("aria-invalid", "true");
    first = first || $(prefix + "-" + name);
  }
  if (!first) $("account-status").textContent = e.message;
  return first;
}

function clearErrors(prefix, names) {
  for (const n of names) {
    $(prefix + "-" + n + "-e").textContent = "";
    $(prefix + "-" + n).setAttribute("aria-invalid", "false");
  }
}

// confirmStep replaces the form's confirmation area with the question and
// its two buttons; yes runs the write, no puts the form back as it was.
function confirmStep(prefix, question, yesText, yes) {
  const box = $(prefix + "-confirm");
  const q = el("p", { id: prefix + "-question", text: question });
  const y = el("button", { type: "button", text: yesText, "aria-describedby": q.id });
  const n = el("button", { type: "button", text: "Change it" });
  n.addEventListener("click", () => { box.replaceChildren(); $(prefix + "-form").querySelector("input").focus(); });
  y.addEventListener("click", async () => {
    y.disabled = true;
    try { await yes(); } finally { y.disabled = false; }
  });
  box.replaceChildren(q, y, n);
  y.focus();
}

function checkMoney(input, errId, rule) {
  const v = input.value.trim();
  const ok = rule.test(v);
  $(errId).textContent = ok ? "" : MONEY_RULE;
  input.setAttribute("aria-invalid", ok ? "false" : "true");
  return ok ? v : null;
}

async function done(message, focus) {
  $("account-status").textContent = message;
  page = 1;
  await refresh();
  if (focus) focus.focus();
}

function credit(ev) {
  ev.preventDefault();
  clearErrors("credit", ["amount", "reference", "note"]);
  const amount = checkMoney($("credit-amount"), "credit-amount-e", MONEY);
  if (amount === null) { $("credit-amount").focus(); return; }
  const reference = $("credit-reference").value.trim(), note = $("credit-note").value.trim();
  confirmStep("credit", "Record a credit of " + indian(amount) + " to " + owner + (reference ? ", reference " + reference : "") + "?",
    "Yes, record credit", async () => {
      try {
        const r = await api("POST", path(owner) + "/credits", { data: { amount, reference, note: note || null } });
        $("credit-confirm").replaceChildren();
        const e = r.data.entry;
        $("credit-form").reset();
        await done(r.meta.replayed
          ? "Reference " + e.reference + " was recorded before (" + indian(e.amount) + ", " + when(e.createdAt) + "): nothing recorded again."
          : "Credit of " + indian(e.amount) + " recorded, reference " + e.reference + ".", $("account-status"));
      } catch (e) {
        $("credit-confirm").replaceChildren();
        (fieldErrors("credit", e, { amount: "amount", reference: "reference", note: "note" }) || $("credit-amount")).focus();
      }
    });
}

function adjust(ev) {
  ev.preventDefault();
  clearErrors("adjust", ["amount", "note"]);
  const amount = checkMoney($("adjust-amount"), "adjust-amount-e", SIGNED);
  if (amount === null) { $("adjust-amount").focus(); return; }
  const note = $("adjust-note").value.trim();
  adjustKey = adjustKey || crypto.randomUUID();
  confirmStep("adjust", "Record an adjustment of " + indian(amount) + " to " + owner + "'s balance?", "Yes, record adjustment", async () => {
    try {
      const r = await api("POST", path(owner) + "/adjustments", { data: { amount, note } }, { "Idempotency-Key": adjustKey });
      adjustKey = "";
      $("adjust-confirm").replaceChildren();
      $("adjust-form").reset();
      await done("Adjustment of " + indian(r.data.entry.amount) + " recorded.", $("account-status"));
    } catch (e) {
      $("adjust-confirm").replaceChildren();
      if (e.status && e.status < 500) adjustKey = ""; // refused: nothing written, the next try is a new request
      (fieldErrors("adjust", e, { amount: "amount", note: "note" }) || $("adjust-amount")).focus();
    }
  });
}

function limit(ev) {
  ev.preventDefault();
  clearErrors("limit", ["amount"]);
  const input = $("limit-amount");
  let creditLimit = null;
  if (input.value.trim() !== "") {
    creditLimit = checkMoney(input, "limit-amount-e", MONEY);
    if (creditLimit === null) { input.focus(); return; }
  }
  const what = creditLimit === null ? "unlimited" : indian(creditLimit);
  const save = async (confirm) => {
    try {
      const a = (await api("PUT", path(owner) + "/limit", { data: { creditLimit, confirm } })).data;
      $("limit-confirm").replaceChildren();
      input.value = "";
      await done("Credit limit saved: " + (a.creditLimit === null ? "unlimited" : indian(a.creditLimit)) + ".", $("account-status"));
    } catch (e) {
      if (e.status === 409 && !confirm) {
        // Below what is held: the server's message says what it means; ask again.
        confirmStep("limit", e.message, "Yes, save it below what is held", () => save(true));
        return;
      }
      $("limit-confirm").replaceChildren();
      (fieldErrors("limit", e, { creditLimit: "amount" }) || input).focus();
    }
  };
  confirmStep("limit", "Set " + owner + "'s credit limit to " + what + "?", "Yes, save limit", () => save(false));
}

// download saves the account's entries as CSV (the admin route
// entries.csv: oldest first, accounts.md's escaping), of the days From and
// To when given. The file is fetched with the session's token, which a
// plain link could not carry, and saved from memory.
async function download() {
  const q = new URLSearchParams();
  for (const [k, id] of [["from", "csv-from"], ["to", "csv-to"]]) if ($(id).value) q.set(k, $(id).value);
  $("csv-e").textContent = "";
  let csv;
  try {
    csv = await api("GET", path(owner) + "/entries.csv" + (q.size ? "?" + q : ""), undefined, {}, true);
  } catch (e) {
    $("csv-e").textContent = e.message;
    return;
  }
  const rows = csv.split("\r\n").length - 2;
  const url = URL.createObjectURL(new Blob([csv], { type: "text/csv" }));
  const a = el("a", { href: url, download: owner + "-entries.csv", hidden: "" });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
  $("account-status").textContent = "Downloaded " + rows + " entries as " + owner + "-entries.csv.";
}

function clearForms() {
  for (const f of ["credit", "adjust", "limit"]) {
    $(f + "-form").reset();
    $(f + "-confirm").replaceChildren();
    for (const e of $(f + "-form").querySelectorAll(".error")) e.textContent = "";
  }
  adjustKey = "";
}

export function clearAccount() {
  owner = "";
  clearForms();
  $("account-facts").replaceChildren();
  $("entry-rows").replaceChildren();
  $("account-status").textContent = "";
}

$("credit-form").addEventListener("submit", credit);
$("adjust-form").addEventListener("submit", adjust);
$("limit-form").addEventListener("submit", limit);
$("adjust-amount").addEventListener("input", () => { adjustKey = ""; });
$("adjust-note").addEventListener("input", () => { adjustKey = ""; });
$("entries-newer").addEventListener("click", async () => { page = Math.max(1, page - 1); await loadEntries(); });
$("entries-older").addEventListener("click", async () => { page += 1; await loadEntries(); });
$("entries-csv").addEventListener("click", download);
