// An article's duty rules, in its view (#article/<documentId>):
// duty-rules.md §15 ("The console's catalogue"). The rule versions with
// their periods and citations; one chosen from the list (or a new one) is
// edited as JSON in **Duty rules**, tried with **Preview quote** (a field
// for each input the edited version declares, and the instrument date:
// the quote's lines, from POST …/rules/preview), and saved with **Save
// rules** (PUT …/rules: every version, the edited one replaced, added or
// left out), from the article's version read. Every problem is shown
// beside the field it names: the version's beside Duty rules, each with
// its path ("components[2].rate: …"), an input's beside that input.
import { $, el, api } from "./core.js";
import { INPUTS, dutyTable, dutyRule, period, ruleCitation, rupees } from "./duty.js";

const BASE = "/api/console/catalogue/articles/";
const JSON_TYPE = { "Content-Type": "application/json" };
const INTEGER = /^(0|[1-9][0-9]{0,14})$/;
const DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

// article is the article shown; editing the version being edited: its
// place among the article's versions, new when it is added, and the
// inputs its fields were built for; reload shows the article again.
let article = null;
let editing = null;
let archiving = null;
let reload = async () => {};

// todayInIndia is today's date in India (IST, UTC+5:30), as the API's.
function todayInIndia() { return new Date(Date.now() + 330 * 60000).toISOString().slice(0, 10); }

// dayBefore is the date before d ("YYYY-MM-DD").
function dayBefore(d) { return new Date(Date.parse(d + "T00:00:00Z") - 86400000).toISOString().slice(0, 10); }

// pathString writes a problem's path as the API's tools do:
// components[2].rate.
export function pathString(path) {
  let s = "";
  for (const p of path) s += typeof p === "number" ? "[" + p + "]" : (s ? "." : "") + p;
  return s;
}

// showRules shows article a's versions and closes the editor; again shows
// the article as it now is (after a save).
export function showRules(a, again) {
  if (!article || article.documentId !== a.documentId) editing = null;
  article = a;
  reload = again;
  const rules = a.duty_rules || [];
  const open = !a.retired;
  $("rule-rows").replaceChildren(...rules.map((v, i) => el("tr", {},
    el("th", { scope: "row", text: "Version " + (i + 1) + (v.legacy ? " (migrated)" : "") }),
    el("td", { text: period(v.effectiveFrom, v.effectiveTo) }),
    el("td", {}, ...ruleCitation(v.citation)),
    el("td", { class: "actions" }, ...(open ? [
      el("button", { type: "button", text: "Edit version " + (i + 1), "data-i": String(i), class: "edit-rule" }),
      rules.length > 1 ? el("button", { type: "button", text: "Archive version " + (i + 1), "data-i": String(i), class: "archive-rule plain" }) : null,
    ] : [])))));
  $("rules-empty").hidden = rules.length > 0;
  $("rule-add").hidden = !open;
  $("archive-confirm").hidden = true;
  $("rules-error").textContent = "";
  if (!editing) closeEditor();
}

function closeEditor() {
  editing = null;
  $("rule-form").hidden = true;
  $("try-out").replaceChildren();
}

// template is a new version: the newest one's inputs, bases, components
// and total, from today, open, with a citation to fill in.
function template() {
  const rules = article.duty_rules || [];
  const last = rules[rules.length - 1] || {};
  const v = { effectiveFrom: todayInIndia(), effectiveTo: null, citation: { text: "", url: "https://" } };
  for (const k of ["inputs", "bases", "components", "total", "declared"]) if (last[k] !== undefined) v[k] = last[k];
  if (last.citation && !last.legacy) v.citation = last.citation;
  return v;
}

// edit opens the editor on version i of the article, or on a new one
// (i null), its JSON pretty-printed. The versions hold strings, booleans
// and nulls only, so JSON.stringify writes them exactly.
function edit(i) {
  const rules = article.duty_rules || [];
  const v = i === null ? template() : rules[i];
  editing = { index: i, inputs: "" };
  $("rule-h").textContent = i === null ? "New version" : "Version " + (i + 1) + " of " + rules.length;
  $("rule-json").value = JSON.stringify(v, null, 2);
  $("rule-new-note").hidden = i !== null;
  $("rule-json").setAttribute("aria-describedby", "rule-hint " + (i === null ? "rule-new-note " : "") + "rule-json-e");
  problems([]);
  $("rule-error").textContent = "";
  $("try-out").replaceChildren();
  $("try-error").textContent = "";
  fields(v);
  $("try-date").value = defaultDate(v);
  $("rule-form").hidden = false;
  $("rule-json").focus();
}

// defaultDate is the day the preview quotes the version on: today when it
// is in force today, else its first day, else its last.
function defaultDate(v) {
  const today = todayInIndia();
  if (v.effectiveFrom && today < v.effectiveFrom) return v.effectiveFrom;
  if (v.effectiveTo && today >= v.effectiveTo) return dayBefore(v.effectiveTo);
  return today;
}

// fields builds a field for each input v declares, labelled in words, in
// the order of duty-rules.md §3: a text field for a numeric one, a select
// of its values for an enum one. Values typed are kept by name.
function fields(v) {
  const inputs = v && typeof v.inputs === "object" && v.inputs !== null && !Array.isArray(v.inputs) ? v.inputs : {};
  const names = Object.keys(INPUTS).filter((n) => typeof inputs[n] === "object" && inputs[n] !== null);
  const signature = JSON.stringify(names.map((n) => [n, inputs[n].values || null, inputs[n].required || false, inputs[n].default || null]));
  if (editing.inputs === signature) return;
  editing.inputs = signature;
  const kept = {};
  for (const e of $("try-fields").querySelectorAll("[name]")) kept[e.name] = e.value;
  $("try-fields").replaceChildren(...names.map((n) => field(n, inputs[n], kept[n])));
  $("try-none").hidden = names.length > 0;
}

function field(name, spec, value) {
  const id = "try-" + name;
  const hint = spec.required ? "Required by this version." : spec.default !== undefined ? "Default " + spec.default + "." : "Optional.";
  const control = Array.isArray(spec.values)
    ? el("select", { id, name, "aria-describedby": id + "-h " + id + "-e" },
      el("option", { value: "", text: spec.required ? "Not given (required)" : "Not given" }),
      ...spec.values.map((x) => el("option", { value: String(x), text: String(x) })))
    : el("input", { id, name, inputmode: "numeric", autocomplete: "off", "aria-describedby": id + "-h " + id + "-e" });
  if (value !== undefined) control.value = value;
  if (spec.required) control.setAttribute("aria-required", "true");
  return el("div", { class: "try-field" }, el("label", { for: id, text: INPUTS[name] }),
    el("p", { id: id + "-h", class: "field-hint", text: hint }), control,
    el("p", { id: id + "-e", class: "error", role: "alert" }));
}

// parsed reads Duty rules: the version's object, or null with the reason
// beside the field.
function parsed() {
  let v;
  try { v = JSON.parse($("rule-json").value); } catch (e) {
    problems(["Duty rules is not JSON: " + e.message]);
    return null;
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    problems(["Duty rules must be one rule version: a JSON object ({…})"]);
    return null;
  }
  return v;
}

// problems shows the version's problems beside Duty rules, each on a line
// of its own, and marks the field.
function problems(list) {
  $("rule-json-e").replaceChildren(...(list.length ? [el("ul", {}, ...list.map((m) => el("li", { text: m })))] : []));
  $("rule-json").setAttribute("aria-invalid", list.length ? "true" : "false");
  if (list.length) $("rule-json").focus();
}

// inputErrors shows each input's and the date's reason beside it.
function inputErrors(errs) {
  let first = null;
  for (const e of $("rule-form").querySelectorAll(".try-field [name], #try-date")) {
    const name = e.id === "try-date" ? "instrumentDate" : e.name;
    $(e.id + "-e").textContent = errs[name] || "";
    e.setAttribute("aria-invalid", errs[name] ? "true" : "false");
    if (errs[name] && !first) first = e;
  }
  return first;
}

// readInputs checks the preview's fields before anything is sent (whole
// rupees or months, as the API takes them) and returns the body's inputs
// as JSON text (digits as typed: no rounding through a number), or null.
function readInputs() {
  const errs = {};
  const parts = [];
  for (const e of $("try-fields").querySelectorAll("[name]")) {
    const s = e.value.trim();
    if (s === "") continue;
    if (e.localName === "select") parts.push(JSON.stringify(e.name) + ":" + JSON.stringify(s));
    else if (!INTEGER.test(s)) errs[e.name] = e.name + " must be a whole number of " + (e.name === "termMonths" ? "months" : "rupees") + ", at most 15 digits";
    else parts.push(JSON.stringify(e.name) + ":" + s);
  }
  const date = $("try-date").value.trim();
  if (date !== "" && !DATE.test(date)) errs.instrumentDate = "instrumentDate must be a date (YYYY-MM-DD)";
  const first = inputErrors(errs);
  if (first) { first.focus(); return null; }
  return { inputs: "{" + parts.join(",") + "}", date };
}

// refusal sorts the API's problems to the fields they name: the version's
// (under rule, or duty_rules[the edited one]) beside Duty rules, an
// input's beside it, the rest beside the form (where).
function refusal(e, prefix, where) {
  const details = (e.body && e.body.error && e.body.error.details && e.body.error.details.errors) || [];
  const mine = [];
  const inputs = {};
  const other = [];
  for (const d of details) {
    const p = d.path || [];
    if (prefix.every((x, i) => p[i] === x)) {
      const rest = pathString(p.slice(prefix.length));
      mine.push((rest ? rest + ": " : "") + d.message);
    } else if ((p[0] === "inputs" && $("try-" + p[1])) || p[0] === "instrumentDate") inputs[p[0] === "inputs" ? p[1] : p[0]] = d.message;
    else other.push((p.length ? pathString(p) + ": " : "") + d.message);
  }
  const first = inputErrors(inputs);
  problems(mine);
  // What no field names is said beside the form; a refusal that names
  // nothing at all (a 404, a 5xx) says its message there.
  $(where).textContent = other.length ? other.join(" · ") : (mine.length || first ? "" : e.message);
  if (!mine.length && first) first.focus();
}

async function preview() {
  $("try-error").textContent = "";
  $("try-out").replaceChildren();
  const v = parsed();
  if (!v) return;
  problems([]);
  fields(v);
  const read = readInputs();
  if (!read) return;
  const body = '{"rule":' + $("rule-json").value + ',"inputs":' + read.inputs + (read.date ? ',"instrumentDate":' + JSON.stringify(read.date) : "") + "}";
  try {
    const q = (await api("POST", BASE + encodeURIComponent(article.documentId) + "/rules/preview", new Blob([body]), JSON_TYPE)).data;
    if (!q.duty) {
      $("try-out").replaceChildren(el("p", { text: "No amount: this rule takes the Amount the caller declares; give one to see its lines." }));
      return;
    }
    $("try-out").replaceChildren(dutyTable(q.duty, "Preview quote: duty of one paper"), dutyRule(q.duty));
    $("status").textContent = "Preview quote: " + rupees(q.duty.total) + " for one paper on " + q.duty.instrumentDate + ".";
  } catch (e) { refusal(e, ["rule"], "try-error"); }
}

// save sends every version, the edited one replaced (or added where its
// effectiveFrom puts it), from the article's version read. A new version
// ends the one before it on its first day when that one is open.
async function save(ev) {
  ev.preventDefault();
  $("rule-error").textContent = "";
  const v = parsed();
  if (!v) return;
  problems([]);
  const rules = (article.duty_rules || []).map((x) => JSON.stringify(x));
  let at = editing.index;
  let ended = "";
  if (at === null) {
    const from = typeof v.effectiveFrom === "string" ? v.effectiveFrom : "";
    const old = article.duty_rules || [];
    at = old.findIndex((x) => (x.effectiveFrom || "") > from);
    if (at < 0) at = old.length;
    const before = old[at - 1];
    if (before && from && before.effectiveTo === null && (before.effectiveFrom || "") < from) {
      rules[at - 1] = JSON.stringify({ ...before, effectiveTo: from });
      ended = " Version " + at + " now ends on " + from + ".";
    }
    rules.splice(at, 0, $("rule-json").value);
  } else rules[at] = $("rule-json").value;
  await send(rules, ["duty_rules", at], "rule-error", "Saved the duty rules." + ended);
}

// send saves rules (each version's JSON text) and shows the article as it
// now is; a refusal is shown by refusal, beside where.
async function send(rules, prefix, where, done) {
  const body = '{"version":' + article.version + ',"duty_rules":[' + rules.join(",") + "]}";
  try {
    const r = await api("PUT", BASE + encodeURIComponent(article.documentId) + "/rules", new Blob([body]), JSON_TYPE);
    closeEditor();
    await reload();
    $("status").textContent = r.meta && r.meta.published === false ? done + " " + r.meta.message : done;
    $("rules-h").focus();
  } catch (e) {
    if (e.status === 409 && e.body && e.body.data) {
      // The versions as they now are; what was typed stays in Duty rules.
      showRules(e.body.data, reload);
      $("status").textContent = "Someone else changed this article first: " + e.message.replace(/\.?$/, ".") +
        " Its versions are shown as they are now; your edit is kept: save again to replace them.";
    } else refusal(e, prefix, where);
  }
}

async function archive() {
  const i = archiving;
  const rules = (article.duty_rules || []).filter((_, j) => j !== i).map((x) => JSON.stringify(x));
  $("archive-confirm").hidden = true;
  await send(rules, ["duty_rules", -1], "rules-error", "Archived version " + (i + 1) + ": the change log keeps it.");
}

$("rule-rows").addEventListener("click", (ev) => {
  const b = ev.target.closest("button");
  if (!b) return;
  const i = Number(b.dataset.i);
  if (b.classList.contains("edit-rule")) { $("archive-confirm").hidden = true; edit(i); return; }
  archiving = i;
  $("archive-q").textContent = "Archive version " + (i + 1) + " (" + period(article.duty_rules[i].effectiveFrom, article.duty_rules[i].effectiveTo) +
    ")? Quotes and orders on its dates will find no rule; the change log keeps it.";
  $("archive-confirm").hidden = false;
  $("archive-no").focus();
});
$("archive-no").addEventListener("click", () => { $("archive-confirm").hidden = true; $("rule-add").focus(); });
$("archive-yes").addEventListener("click", archive);
$("rule-add").addEventListener("click", () => edit(null));
$("try").addEventListener("click", preview);
$("rule-form").addEventListener("submit", save);
$("rule-cancel").addEventListener("click", () => { closeEditor(); $("rule-add").focus(); });
let typing = 0;
$("rule-json").addEventListener("input", () => {
  clearTimeout(typing);
  typing = setTimeout(() => {
    try { const v = JSON.parse($("rule-json").value); if (editing && v && typeof v === "object") fields(v); } catch { /* shown when previewed or saved */ }
  }, 300);
});

// clearRules forgets the article shown (its view is left, or the person
// signs out).
export function clearRules() { article = null; closeEditor(); $("rule-rows").replaceChildren(); }
