// The catalogue: an admin's views (console.md, "Catalogue (admin)"):
// #catalogue (the articles with filters, add an article, import a file
// with a preview) and #article/<documentId> (one article: edit its
// amounts, retire it, its change log). Every field is checked here with
// the rules the API checks (stampduty.Article.Validate), the reason
// beside the field, before anything is sent.
import { $, el, api, register } from "./core.js";
import { showRules, clearRules } from "./rules.js";

// STATES are the states and union territories of India, exactly as the
// API spells them (shared/stampduty/states.go; a Go test checks).
const STATES = ["Andhra Pradesh", "Arunachal Pradesh", "Assam", "Bihar", "Chhattisgarh", "Goa", "Gujarat", "Haryana",
  "Himachal Pradesh", "Jharkhand", "Karnataka", "Kerala", "Madhya Pradesh", "Maharashtra", "Manipur", "Meghalaya",
  "Mizoram", "Nagaland", "Odisha", "Punjab", "Rajasthan", "Sikkim", "Tamil Nadu", "Telangana", "Tripura",
  "Uttar Pradesh", "Uttarakhand", "West Bengal", "Andaman and Nicobar Islands", "Chandigarh",
  "Dadra and Nagar Haveli and Daman and Diu", "Delhi", "Jammu and Kashmir", "Ladakh", "Lakshadweep", "Puducherry"];
const MAX_AMOUNT = 999999999999999;
const MAX_FILE = 4 * 1024 * 1024; // the most the console takes (the API says so too)
const BASE = "/api/console/catalogue";

// The fields of an article's form: the catalogue file's names, with the
// label a person reads.
const AMOUNTS = [
  ["min", "Min (₹)", "numeric"], ["max", "Max (₹)", "numeric"],
  ["fixed", "Fixed (₹, empty for none)", "numeric"],
  ["amountPercentConsideration", "Factor of the consideration price (empty for none)", "decimal"],
];

// fields builds the labelled fields of an article's form into box, their
// ids prefixed by p; with key, purpose_name and state too.
function fields(box, p, key) {
  const out = [];
  const input = (name, label, mode) => {
    const id = p + "-" + name;
    out.push(el("div", {}, el("label", { for: id, text: label }),
      el("input", { id, name, autocomplete: "off", inputmode: mode, "aria-describedby": id + "-e" }),
      el("p", { id: id + "-e", class: "error", role: "alert" })));
  };
  if (key) {
    input("purpose_name", "Purpose name", "text");
    const id = p + "-state";
    out.push(el("div", {}, el("label", { for: id, text: "State" }),
      el("select", { id, name: "state", "aria-describedby": id + "-e" }, el("option", { value: "", text: "Choose a state" }),
        ...STATES.map((s) => el("option", { value: s, text: s }))),
      el("p", { id: id + "-e", class: "error", role: "alert" })));
  }
  for (const [name, label, mode] of AMOUNTS.slice(0, 3)) input(name, label, mode);
  const fid = p + "-toFollowConsiderationPrice";
  out.push(el("div", { class: "check" }, el("input", { id: fid, name: "toFollowConsiderationPrice", type: "checkbox" }),
    el("label", { for: fid, text: "The amount follows the consideration price" })));
  input(...AMOUNTS[3]);
  box.replaceChildren(...out);
}

const INTEGER = /^(0|[1-9][0-9]*)$/;
const DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;
// PRINTABLE is unicode.IsGraphic: letters, marks, numbers, punctuation,
// symbols and spaces; nothing else.
const NOT_PRINTABLE = /[^\p{L}\p{M}\p{N}\p{P}\p{S}\p{Zs}]/u;

// read reads and checks the form whose fields fields() built with prefix
// p: the article's JSON (numbers kept as typed, so that a factor of 18
// decimals is sent exactly) or null, each failing field's reason shown
// beside it, as the API would word it.
function read(p, key) {
  const v = (name) => $(p + "-" + name).value.trim();
  const errs = {};
  const parts = [];
  if (key) {
    const purpose = $(p + "-purpose_name").value;
    if (purpose === "") errs.purpose_name = "purpose_name must not be empty";
    else if (purpose.trim() !== purpose) errs.purpose_name = "purpose_name must not start or end with white space";
    else if ([...purpose].length > 200) errs.purpose_name = "purpose_name must be at most 200 characters";
    else if (NOT_PRINTABLE.test(purpose)) errs.purpose_name = "purpose_name must not contain control, format, bidirectional, zero-width or line separator characters";
    if (!STATES.includes(v("state"))) errs.state = "state must be one of the states or union territories of India";
    parts.push('"purpose_name":' + JSON.stringify(purpose), '"state":' + JSON.stringify(v("state")));
  }
  const amount = (name, optional) => {
    const s = v(name);
    if (s === "" && optional) return "null";
    if (s === "") errs[name] = name + " is a required field";
    else if (!INTEGER.test(s)) errs[name] = name + " must be an integer";
    else if (s.length > 15 || Number(s) > MAX_AMOUNT) errs[name] = name + " must be at most 999999999999999";
    return s;
  };
  const min = amount("min"), max = amount("max"), fixed = amount("fixed", true);
  if (!errs.min && !errs.max && Number(min) > Number(max)) errs.max = "max must be greater than or equal to min";
  if (!errs.fixed && !errs.min && !errs.max && fixed !== "null" && (Number(fixed) < Number(min) || Number(fixed) > Number(max))) {
    errs.fixed = "fixed must be between min and max";
  }
  const follows = $(p + "-toFollowConsiderationPrice").checked;
  let factor = v("amountPercentConsideration");
  if (factor === "") {
    factor = "null";
    if (follows) errs.amountPercentConsideration = "amountPercentConsideration is required when toFollowConsiderationPrice is true";
  } else if (!DECIMAL.test(factor) || Number(factor) <= 0 || Number(factor) > 1) {
    errs.amountPercentConsideration = "amountPercentConsideration must be greater than 0 and at most 1";
  } else if ((factor.split(".")[1] || "").length > 18) {
    errs.amountPercentConsideration = "amountPercentConsideration must have at most 18 decimal places";
  }
  parts.push('"min":' + min, '"max":' + max, '"fixed":' + fixed, '"toFollowConsiderationPrice":' + follows, '"amountPercentConsideration":' + factor);
  show(p, errs);
  return Object.keys(errs).length ? null : parts;
}

// show puts each field's reason beside it (and the focus on the first).
function show(p, errs) {
  let first = null;
  for (const e of document.querySelectorAll("#" + p + "-fields [id$='-e']")) {
    const name = e.id.slice(p.length + 1, -2);
    e.textContent = errs[name] || "";
    const input = $(p + "-" + name);
    input.setAttribute("aria-invalid", errs[name] ? "true" : "false");
    if (errs[name] && !first) first = input;
  }
  if (first) first.focus();
}

// refused shows the API's refusal: each field's reason beside it, or the
// message beside the form.
function refused(p, e) {
  const details = (e.body && e.body.error && e.body.error.details && e.body.error.details.errors) || [];
  const errs = {};
  for (const d of details) if (d.path.length === 1 && $(p + "-" + d.path[0])) errs[d.path[0]] = d.message;
  show(p, errs);
  $(p + "-error").textContent = e.message;
}

function json(parts) { return new Blob(["{" + parts.join(",") + "}"]); }
const JSON_TYPE = { "Content-Type": "application/json" };

function money(n) { return n === null || n === undefined ? "—" : "₹" + n; }
// schedule reports whether a has duty rules of its own: its amounts are
// their projection for today (duty-rules.md §9).
function schedule(a) { return (a.duty_rules || []).some((v) => !v.legacy); }
function rulesText(a) {
  const n = (a.duty_rules || []).length;
  return schedule(a) ? n + (n === 1 ? " version" : " versions") : "Migrated";
}
function label(a) { return a.purpose_name + " — " + a.state; }
function when(t) { return new Date(t).toLocaleString(); }

// The list.
async function loadList() {
  const q = new URLSearchParams();
  for (const f of ["state", "purpose", "status"]) { const v = $("cf-" + f).value.trim(); if (v) q.set(f, v); }
  const page = await api("GET", BASE + "/articles?" + q);
  $("cat-rows").replaceChildren(...page.data.map((a) => el("tr", {},
    el("td", {}, el("a", { href: "#article/" + a.documentId, text: label(a) })),
    el("td", { text: money(a.min) }), el("td", { text: money(a.max) }), el("td", { text: money(a.fixed) }),
    el("td", { text: a.toFollowConsiderationPrice ? "× " + a.amountPercentConsideration : "—" }),
    el("td", { text: rulesText(a) }),
    el("td", { text: String(a.version) }),
    el("td", { text: a.retired ? "Retired" : "Active" }))));
  $("cat-empty").hidden = page.data.length > 0;
  $("cat-caption").textContent = page.meta.total + (page.meta.total === 1 ? " article" : " articles");
}

async function add(ev) {
  ev.preventDefault();
  $("add-error").textContent = "";
  const parts = read("add", true);
  if (!parts) return;
  try {
    const r = await api("POST", BASE + "/articles", json(parts), JSON_TYPE);
    $("add-form").reset();
    notice = saved("Added " + label(r.data) + ".", r);
    location.hash = "#article/" + r.data.documentId;
  } catch (e) { refused("add", e); }
}

function saved(what, r) { return r.meta && r.meta.published === false ? what + " " + r.meta.message : what; }

// The import: the file is read here, checked for size and type before it
// is sent, previewed, then applied with the preview's id.
let importing = null;
async function previewImport(ev) {
  ev.preventDefault();
  $("import-error").textContent = "";
  $("import-preview").hidden = true;
  const file = $("import-file").files[0];
  if (!file) { $("import-error").textContent = "Choose the catalogue file first."; return; }
  if (file.size > MAX_FILE) { $("import-error").textContent = "The catalogue file is larger than 4 MiB"; return; }
  if (!(file.type === "application/json" || /\.json$/i.test(file.name))) {
    $("import-error").textContent = "The catalogue file must be JSON (a .json file, as stampctl articles import takes)";
    return;
  }
  const retire = $("import-retire").checked;
  const body = await file.arrayBuffer();
  try {
    const p = (await api("POST", BASE + "/import/preview?retireMissing=" + retire, new Blob([body]), JSON_TYPE)).data;
    importing = { body, retire };
    renderPreview(p);
  } catch (e) {
    const details = (e.body && e.body.error && e.body.error.details && e.body.error.details.errors) || [];
    $("import-error").replaceChildren(e.message, ...details.filter((d) => d.path.length && d.path[0])
      .map((d) => el("span", { class: "detail", text: " · " + d.path.join(".") + ": " + d.message })));
  }
}

function renderPreview(p) {
  importing.preview = p.preview;
  $("import-summary").textContent = "Would add " + p.add + ", change " + p.change + ", retire " + p.retire +
    " and leave " + p.leave + " as they are.";
  $("import-rows").replaceChildren(...p.steps.map((s) => el("tr", {},
    el("td", { text: s.action }), el("td", { text: s.purpose_name + " — " + s.state }),
    el("td", { class: "changes", text: changes(s.changes) }))));
  $("import-apply").hidden = p.steps.length === 0;
  $("apply-error").textContent = p.steps.length ? "" : "The file changes nothing.";
  $("import-preview").hidden = false;
  $("import-h").focus();
}

async function applyImport() {
  $("apply-error").textContent = "";
  try {
    const r = await api("POST", BASE + "/import?retireMissing=" + importing.retire + "&preview=" + importing.preview,
      new Blob([importing.body]), JSON_TYPE);
    const d = r.data;
    $("import-preview").hidden = true;
    $("import-form").reset();
    importing = null;
    await loadList();
    $("status").textContent = saved("Imported: " + d.added + " added, " + d.changed + " changed, " + d.retired + " retired, " + d.left + " left as they were.", r);
  } catch (e) {
    if (e.status === 409 && e.body && e.body.data) {
      renderPreview(e.body.data);
      $("apply-error").textContent = e.message;
    } else $("apply-error").textContent = e.message;
  }
}

// changes renders field changes: "max 500 → 800; fixed null → 250".
function changes(cs) {
  return cs.map((c) => c.field + " " + (c.before === undefined ? c.after : c.before + " → " + c.after)).join("; ");
}

// One article. notice is what the view says once shown (an add's outcome,
// said after the move to the article's view).
let current = null;
let notice = "";
async function loadArticle(doc) {
  const d = (await api("GET", BASE + "/articles/" + encodeURIComponent(doc) + "/log")).data;
  renderArticle(d.article);
  $("log-rows").replaceChildren(...d.changes.map((c) => el("tr", {},
    el("td", { text: String(c.version) }), el("td", { text: when(c.at) }), el("td", { text: c.by }),
    el("td", { text: c.kind }), el("td", { class: "changes", text: changes(c.changes) }))));
  $("log-empty").hidden = d.changes.length > 0;
  if (notice) { $("status").textContent = notice; notice = ""; }
}

function renderArticle(a) {
  current = a;
  $("article-h").textContent = label(a);
  const facts = [["Purpose", a.purpose_name], ["State", a.state], ["Min", money(a.min)], ["Max", money(a.max)],
    ["Fixed", money(a.fixed)], ["Follows the consideration price", a.toFollowConsiderationPrice ? "Yes" : "No"],
    ["Factor", a.amountPercentConsideration === null ? "—" : String(a.amountPercentConsideration)],
    ["Version", String(a.version)], ["Status", a.retired ? "Retired " + when(a.retiredAt) : "Active"]];
  $("art-facts").replaceChildren(...facts.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })]));
  for (const [name] of AMOUNTS) $("edit-" + name).value = a[name] === null ? "" : String(a[name]);
  $("edit-toFollowConsiderationPrice").checked = a.toFollowConsiderationPrice;
  show("edit", {});
  $("edit-error").textContent = "";
  // An article with rules of its own is edited by its rules: its amounts
  // are their projection (an amounts' edit would replace the rules).
  $("edit-form").hidden = a.retired || schedule(a);
  $("amounts-note").hidden = !schedule(a);
  showRules(a, () => loadArticle(a.documentId));
  $("retire-box").hidden = a.retired;
  $("retire-confirm").hidden = true;
  $("retire").hidden = false;
}

async function edit(ev) {
  ev.preventDefault();
  $("edit-error").textContent = "";
  const parts = read("edit", false);
  if (!parts) return;
  try {
    const r = await api("PUT", BASE + "/articles/" + encodeURIComponent(current.documentId),
      json(['"version":' + current.version, ...parts]), JSON_TYPE);
    await loadArticle(r.data.documentId);
    $("status").textContent = saved("Saved.", r);
  } catch (e) {
    if (e.status === 409 && e.body && e.body.data) {
      await loadArticle(current.documentId);
      $("status").textContent = "Someone else changed this article first: " + e.message.replace(/\.?$/, ".") + " It is shown as it is now.";
    } else refused("edit", e);
  }
}

async function retire() {
  $("retire-error").textContent = "";
  try {
    const r = await api("POST", BASE + "/articles/" + encodeURIComponent(current.documentId) + "/retire");
    await loadArticle(current.documentId);
    $("status").textContent = saved("Retired " + label(r.data) + ".", r);
  } catch (e) { $("retire-error").textContent = e.message; }
}

fields($("add-fields"), "add", true);
fields($("edit-fields"), "edit", false);
$("cf-state").append(...STATES.map((s) => el("option", { value: s, text: s })));
$("cat-filter").addEventListener("submit", (ev) => { ev.preventDefault(); loadList().catch((e) => { $("status").textContent = e.message; }); });
$("add-form").addEventListener("submit", add);
$("import-form").addEventListener("submit", previewImport);
$("import-apply").addEventListener("click", applyImport);
$("edit-form").addEventListener("submit", edit);
$("retire").addEventListener("click", () => {
  $("retire-q").textContent = "Retire " + label(current) + "? No new order or quote can use it.";
  $("retire-confirm").hidden = false;
  $("retire").hidden = true;
  $("retire-no").focus();
});
$("retire-no").addEventListener("click", () => { $("retire-confirm").hidden = true; $("retire").hidden = false; $("retire").focus(); });
$("retire-yes").addEventListener("click", retire);

register("catalogue", {
  title: "Catalogue",
  admin: true,
  load: () => loadList(),
  clear: () => { $("cat-rows").replaceChildren(); $("import-preview").hidden = true; importing = null; },
});
register("article", {
  admin: true,
  load: (arg) => { if (arg) return loadArticle(arg); location.hash = "#catalogue"; },
  clear: () => { $("log-rows").replaceChildren(); clearRules(); current = null; },
});
