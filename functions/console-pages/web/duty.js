// The explained duty (duty-rules.md §8, §15): an order's, and the preview
// of a rule version an admin is editing, shown the same way: a table of
// its lines (Label, Base, Rate, Amount) with their total, and the rule's
// citation. Amounts and rates are the API's decimal strings, written out
// as they are (grouped, never turned into a number that could round).
import { el } from "./core.js";

// rupees writes an amount ("-90000.00") in Indian grouping: "−₹90,000.00".
export function rupees(s) {
  const neg = s.startsWith("-");
  const [whole, paise] = (neg ? s.slice(1) : s).split(".");
  let head = whole.slice(0, -3);
  const groups = [whole.slice(-3)];
  while (head.length > 0) { groups.unshift(head.slice(-2)); head = head.slice(0, -2); }
  return (neg ? "−" : "") + "₹" + groups.join(",") + (paise === undefined ? "" : "." + paise);
}

// percent writes a rate, a fraction ("0.0025"), as a percentage: "0.25%".
export function percent(rate) {
  const neg = rate.startsWith("-");
  const [i, f = ""] = (neg ? rate.slice(1) : rate).split(".");
  const digits = f.padEnd(2, "0");
  const whole = (i + digits.slice(0, 2)).replace(/^0+(?=\d)/, "");
  const frac = digits.slice(2).replace(/0+$/, "");
  return (neg ? "−" : "") + whole + (frac ? "." + frac : "") + "%";
}

// INPUTS are the inputs of duty rules (duty-rules.md §3) by name, each
// with the words a person reads: a preview's field labels, a line's base.
export const INPUTS = {
  considerationPrice: "Consideration price", marketValue: "Market value", monthlyRent: "Monthly rent",
  refundableDeposit: "Refundable deposit", nonRefundableDeposit: "Non-refundable deposit", termMonths: "Term (months)",
  amount: "Amount", partyCategory: "Party category", locationClass: "Location class", propertyUse: "Property use",
  relation: "Relation", tradeType: "Trade type",
};

// words keeps each part on one line (an amount, a rate), wrapped only
// between them; on a phone the parts after the first go under it.
function words(...parts) {
  return parts.flatMap((p, i) => [i ? " " : "", el("span", { class: i ? "nw sub" : "nw", text: p })]).filter((x) => x !== "");
}

// base says what a line's rate or units applied to: the amount, and
// which base (an input in words) or components it is.
function base(l) {
  if (!l.baseAmount) return words("—");
  if (l.base === "termMonths") return words(l.baseAmount.replace(/\.00$/, "") + " months");
  const of = l.of ? "of " + l.of.join(", ") : (INPUTS[l.base] || l.base || "").toLowerCase();
  return of ? words(rupees(l.baseAmount), "(" + of + ")") : words(rupees(l.baseAmount));
}

// rate writes a line's rate as the rule gives it, and as a percentage; a
// per-unit line's units.
function rate(l) {
  if (l.rate) return words(l.rate, "(" + percent(l.rate) + ")");
  if (l.units) return words(l.units + " ×", "₹" + l.unit);
  return words("—");
}

// notes are what else the line says: its band, its exact value and
// rounding, the limit applied.
function notes(l) {
  const out = [];
  if (l.band) out.push("band " + (l.band.index + 1) + (l.band.upTo === null ? ", the last" : ", up to " + rupees(l.band.upTo)));
  if (l.rounding) out.push((l.exact ? "exact " + l.exact + ", " : "") + "rounded " + l.rounding);
  if (l.limit) out.push("the component's " + (l.limit === "min" ? "minimum" : "maximum") + " applied");
  return out.join("; ");
}

// dutyTable returns the lines of the duty d as a table named caption.
export function dutyTable(d, caption) {
  const row = (l) => {
    const n = notes(l);
    return el("tr", {},
      el("th", { scope: "row" }, l.label, n ? el("span", { class: "note", text: n }) : null),
      el("td", {}, ...base(l)), el("td", {}, ...rate(l)), el("td", { class: "num", text: rupees(l.amount) }));
  };
  return el("table", { class: "duty" },
    el("caption", { text: caption }),
    el("thead", {}, el("tr", {}, ...["Label", "Base", "Rate", "Amount"].map((h) => el("th", { scope: "col", text: h })))),
    el("tbody", {}, ...d.lines.map(row)),
    el("tfoot", {}, el("tr", {}, el("th", { scope: "row", text: "Total" }), el("td"), el("td"),
      el("td", { class: "num", text: rupees(d.total) }))));
}

// web reports whether url is an address a browser can follow (a migrated
// rule names the contract's file instead).
function web(url) { return /^https?:\/\/\S+$/.test(url); }

// period says when a rule version is in force.
export function period(from, to) {
  if (!from && !to) return "always";
  if (!from) return "until " + to + " (not included)";
  if (!to) return "from " + from;
  return "from " + from + " until " + to + " (not included)";
}

// ruleCitation returns the citation of a rule version: a link to its
// source, or, for an address that is not a web one, its text and where
// it comes from.
export function ruleCitation(c) {
  if (!c) return [el("span", { text: "none" })];
  if (web(c.url)) return [el("a", { href: c.url, text: c.text, target: "_blank", rel: "noopener noreferrer" })];
  return [el("span", { text: c.text + " (" + c.url + ")" })];
}

// dutyRule says which rule version priced d and on what date.
export function dutyRule(d) {
  const r = d.rule;
  return el("p", { class: "rule" }, "Rule: ", ...ruleCitation(r.citation),
    ". In force " + period(r.effectiveFrom, r.effectiveTo) + "; instrument date " + d.instrumentDate + ".");
}

// dutySection returns an order's Duty: its heading, the lines of one
// paper and the rule; an order made before duty rules says so.
export function dutySection(d) {
  const h = el("h2", { id: "duty-h", text: "Duty" });
  if (!d) return [h, el("p", { text: "No duty explanation: ordered before duty rules." })];
  return [h, el("div", { class: "duty-box" }, dutyTable(d, "Duty of one paper, line by line")), dutyRule(d)];
}
