// The queue and one order: an operator's views (console.md, "Queue" and
// "Order"): #queue, #queue/<status>, #queue/<status>/test (the test orders,
// test-mode.md: never among the live ones), #order/<documentId>. The mode
// lives in the address, so a reload or a shared link keeps it.
import { $, el, api, route, register } from "./core.js";
import { dutySection } from "./duty.js";

const STATUSES = ["Pending", "Created", "Procured"];
const NEXT = { Pending: "Created", Created: "Procured", Procured: "Printed" };
// The formats of lifecycle.md, checked before a move is sent.
const FORMATS = {
  unique_doc_ref: [/^[A-Z0-9\-/]{1,64}$/, "1 to 64 characters of A–Z, 0–9, - and /, e.g. SUBIN-KAKA142330491727791236986Y"],
  certificate_number: [/^IN-[A-Z]{2}[0-9]{14}[A-Z]$/, "IN-, two letters, 14 digits and a letter, e.g. IN-KA93689528000869Y"],
};
const MAX_BODY = 4 * 1024 * 1024; // larger certificates go straight to S3
const MAX_FILE = 10 * 1024 * 1024; // the most a pre-signed upload takes

// The queue.
let queueNext = null;
async function loadQueue(status, test, more = false) {
  const q = new URLSearchParams({ status });
  if (test) q.set("mode", "test");
  for (const f of ["state", "purpose"]) { const v = $("f-" + f).value.trim(); if (v) q.set(f, v); }
  if (more && queueNext) q.set("pagination[cursor]", queueNext);
  const page = await api("GET", "/api/console/queue?" + q);
  if (!more) $("rows").replaceChildren();
  for (const o of page.data) {
    const sd = o.stamp_duty;
    $("rows").append(el("tr", {},
      el("td", {}, el("a", { href: "#order/" + o.documentId, text: o.documentId })),
      el("td", { text: new Date(o.createdAt).toLocaleString() }),
      el("td", { text: o.owner + (o.livemode ? "" : " (test)") }),
      el("td", { text: sd.state_purpose.purpose_name }),
      el("td", { text: sd.state }),
      el("td", { text: String(o.live_order_fulfillments.length) }),
      el("td", { text: "₹" + sd.total_amount })));
  }
  queueNext = page.meta.pagination.next;
  $("more").hidden = !queueNext;
  $("more").onclick = () => loadQueue(status, test, true).catch((e) => { $("status").textContent = e.message; });
  $("empty").hidden = $("rows").children.length > 0;
  $("queue-caption").textContent = (test ? "Test orders, " : "") + status + ": orders waiting, oldest first";
  const suffix = test ? "/test" : "";
  $("modes").replaceChildren(...[["Live orders", ""], ["Test orders", "/test"]].map(([text, m]) => el("li", {}, el("a", {
    href: "#queue/" + status + m, text, ...(m === suffix ? { "aria-current": "page" } : {}),
  }))));
  const counts = (await api("GET", "/api/console/queue/counts" + (test ? "?mode=test" : ""))).data;
  $("tabs").replaceChildren(...STATUSES.map((s) => el("li", {}, el("a", {
    href: "#queue/" + s + suffix, text: s + " (" + counts[s] + (test ? " test" : "") + ")", ...(s === status ? { "aria-current": "page" } : {}),
  }))));
}

// One order.
let current = null;
async function loadOrder(doc) {
  const o = (await api("GET", "/api/console/orders/" + encodeURIComponent(doc))).data;
  renderOrder(o);
}

// paymentSection shows what the order did to its caller's account
// (accounts.md: every order read carries payment), to operators and
// admins alike: Held, Charged, Released; an order from before accounts has
// none.
function paymentSection(p) {
  const h = el("h2", { text: "Payment" });
  if (!p) return [h, el("p", { text: "None: the order was made before accounts." })];
  const rows = [["Held", p.held], ["Charged", p.charged], ["Released", p.released]];
  return [h, el("dl", { class: "facts" }, ...rows.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: "₹" + v })]))];
}

function renderOrder(o) {
  current = o;
  const sd = o.stamp_duty;
  $("order-h").textContent = "Order " + o.documentId;
  const facts = [["Caller", o.owner], ["Mode", o.livemode ? "Live" : "Test"], ["Created", new Date(o.createdAt).toLocaleString()],
    ["Purpose", sd.state_purpose.purpose_name + " (" + sd.state + ")"],
    ["First party", sd.first_party_name], ["Second party", sd.second_party_name],
    ["Paid by", sd.paid_by], ["Amount", "₹" + sd.amount + " × " + sd.quantity + " = ₹" + sd.total_amount],
    ["Cancelled", o.cancelledAt ? o.cancelledAt + " — " + ((o.cancellation && o.cancellation.reason) || "") : "No"]];
  $("facts").replaceChildren(...facts.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v || "—" })]));
  $("duty").replaceChildren(...dutySection(sd.duty));
  $("payment").replaceChildren(...paymentSection(o.payment));
  const u = sd.uploaded_document;
  $("document").replaceChildren(...(u ? [el("h2", { text: "Uploaded document" }),
    el("p", {}, el("a", { href: u.url, text: u.name, target: "_blank", rel: "noopener" })),
    u.mime === "application/pdf" ? el("iframe", { src: u.url, title: "Uploaded document " + u.name })
      : el("img", { src: u.url, alt: "Uploaded document " + u.name, class: "doc" })] : []));
  $("papers").replaceChildren(...o.live_order_fulfillments.map((f, i) => paper(o, f, i + 1)));
  // An operator may cancel while no paper is Procured or Printed.
  $("cancel").hidden = !!o.cancelledAt || o.live_order_fulfillments.some((f) => f.order_status === "Procured" || f.order_status === "Printed");
}

function field(id, label, name, value) {
  return [el("label", { for: id, text: label }),
    el("input", { id, name, value: value || "", autocomplete: "off", "aria-describedby": id + "-e" }),
    el("p", { id: id + "-e", class: "error", role: "alert" })];
}

function paper(o, f, n) {
  const box = el("fieldset", {}, el("legend", { text: "Paper " + n }));
  const p = "p" + n;
  box.append(el("p", { text: "Status: " + f.order_status + (f.unique_doc_ref ? " · Unique doc ref " + f.unique_doc_ref : "") + (f.certificate_number ? " · Certificate " + f.certificate_number : "") }));
  box.append(el("ol", { class: "history" }, ...(f.status_history || []).map((h) =>
    el("li", { text: h.order_status + " — " + new Date(h.at || h.createdAt).toLocaleString() + (h.by ? " by " + h.by : "") }))));
  const cf = f.certificate_file;
  if (cf) box.append(el("p", {}, "Certificate: ", el("a", { href: cf.url, text: cf.name, target: "_blank", rel: "noopener" }),
    " · " + cf.size + " bytes · SHA-256 " + cf.sha256));
  const next = NEXT[f.order_status];
  if (!next || o.cancelledAt) return box;
  const form = el("form", { novalidate: true });
  if (next === "Created") form.append(...field(p + "-ref", "Unique doc ref", "unique_doc_ref", f.unique_doc_ref));
  if (next === "Procured") form.append(...field(p + "-cn", "Certificate number", "certificate_number", f.certificate_number));
  const err = el("p", { class: "error", role: "alert" });
  form.append(err, el("button", { type: "submit", text: "Move to " + next }));
  form.addEventListener("submit", (ev) => { ev.preventDefault(); move(o, f, next, form, err); });
  if (next === "Printed") box.append(certificate(o, f, p));
  box.append(form);
  return box;
}

async function move(o, f, next, form, err) {
  err.textContent = "";
  const body = { order_status: next };
  let ok = true;
  for (const input of form.querySelectorAll("input[name]")) {
    const v = input.value.trim();
    const [re, why] = FORMATS[input.name];
    const e = $(input.id + "-e");
    e.textContent = re.test(v) ? "" : why;
    input.setAttribute("aria-invalid", re.test(v) ? "false" : "true");
    if (!re.test(v)) { ok = false; input.focus(); }
    body[input.name] = v;
  }
  if (next === "Printed" && !f.certificate_file) {
    err.textContent = "Attach the certificate (PDF) first: a paper is Printed with its certificate.";
    ok = false;
  }
  if (!ok) return;
  await send(err, () => api("PATCH", paperPath(o, f), body), form);
}

function paperPath(o, f) {
  return "/api/console/orders/" + encodeURIComponent(o.documentId) + "/papers/" + encodeURIComponent(f.documentId);
}

// send runs a write and shows the order as it now is. A refusal that names
// a field of form (a number another paper holds: 409 with details.errors)
// is shown beside that field, its value kept for correcting; another 409
// (someone else changed it first) says so plainly, and shows the order as
// it now is too.
async function send(err, write, form) {
  try {
    const o = (await write()).data;
    renderOrder(o);
    $("status").textContent = "Saved.";
  } catch (e) {
    const named = form && namedField(form, e);
    if (named) {
      $(named.input.id + "-e").textContent = named.message;
      named.input.setAttribute("aria-invalid", "true");
      named.input.focus();
    } else if (e.status === 409) {
      await loadOrder(current.documentId);
      $("status").textContent = "Someone else changed this order first: " + e.message + " It is shown as it is now.";
    } else err.textContent = e.message;
  }
}

// namedField returns the input of form that a refusal's details.errors
// names, with its message; null when it names none of them.
function namedField(form, e) {
  const errors = (e.body && e.body.error && e.body.error.details && e.body.error.details.errors) || [];
  for (const d of errors) {
    const input = [...form.querySelectorAll("input[name]")].find((i) => d.path && i.name === d.path[0]);
    if (input) return { input, message: d.message };
  }
  return null;
}

function certificate(o, f, p) {
  const id = p + "-file";
  const input = el("input", { id, type: "file", accept: "application/pdf" });
  const err = el("p", { class: "error", role: "alert" });
  const drop = el("div", { class: "drop", role: "group", "aria-label": "Drop the certificate here" },
    el("label", { for: id, text: "Certificate (PDF)" }), input,
    el("p", { text: "Or drop the PDF here." }), err,
    el("button", { type: "button", text: "Attach certificate" }));
  let file = null;
  input.addEventListener("change", () => { file = input.files[0] || null; });
  drop.addEventListener("dragover", (ev) => { ev.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (ev) => {
    ev.preventDefault(); drop.classList.remove("over");
    file = ev.dataTransfer.files[0] || null;
    if (file) err.textContent = "Ready: " + file.name;
  });
  drop.querySelector("button").addEventListener("click", () => attach(o, f, file, err));
  return drop;
}

async function attach(o, f, file, err) {
  err.textContent = "";
  if (!file) { err.textContent = "Choose the certificate's PDF first."; return; }
  if (file.type !== "application/pdf") { err.textContent = "The certificate must be a PDF (application/pdf)."; return; }
  if (file.size > MAX_FILE) { err.textContent = "The file is larger than 10 MiB, the most a certificate may be."; return; }
  const path = paperPath(o, f) + "/certificate";
  const name = file.name.replace(/[^A-Za-z0-9 ._()-]/g, "_").slice(0, 100);
  await send(err, async () => {
    if (file.size <= MAX_BODY) {
      return api("PUT", path + "?name=" + encodeURIComponent(name), file, { "Content-Type": "application/pdf" });
    }
    const up = (await api("POST", path + "/upload", { name, mime: file.type, size: file.size })).data;
    const r = await fetch(up.url, { method: up.method, headers: up.headers, body: file });
    if (!r.ok) throw new Error("The upload to storage failed (" + r.status + ").");
    return api("PUT", path, { upload: up.upload });
  });
}

async function cancelOrder(ev) {
  ev.preventDefault();
  const reason = $("reason").value.trim();
  $("cancel-error").textContent = "";
  if (!reason || reason.length > 200 || /[\r\n]/.test(reason)) {
    $("cancel-error").textContent = "Give a reason of 1 to 200 characters on one line.";
    $("reason").focus();
    return;
  }
  await send($("cancel-error"), () => api("POST", "/api/console/orders/" + encodeURIComponent(current.documentId) + "/cancel", { reason }));
}


$("filter").addEventListener("submit", (ev) => { ev.preventDefault(); route(); });
$("cancel").addEventListener("submit", cancelOrder);

register("queue", {
  title: "Queue",
  load: (arg) => {
    const [status, mode] = arg.split("/");
    return loadQueue(STATUSES.includes(status) ? status : "Pending", mode === "test");
  },
  clear: () => { $("rows").replaceChildren(); },
});
register("order", {
  load: (arg) => { if (arg) return loadOrder(arg); location.hash = "#queue"; },
  clear: () => { $("papers").replaceChildren(); $("duty").replaceChildren(); $("reason").value = ""; },
});
