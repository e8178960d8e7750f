// The staff's accounts: an admin's view (console.md, "Staff"): #staff.
// The list, an invitation, and per person a role change and disable or
// enable. The person is named in the request's body, never in the URL.
import { $, el, api, register } from "./core.js";

const ROLES = [["operator", "Operator"], ["admin", "Admin"], ["none", "None (no access)"]];
const ROLE_NAME = Object.fromEntries(ROLES);

// emailProblem returns why the API would refuse s as an email
// (staff.ParseEmail's rules and messages), or "" when it would take it.
function emailProblem(s) {
  s = s.trim();
  if (!s) return "email is required";
  if (s.length > 254) return "email must be at most 254 characters";
  const at = s.lastIndexOf("@");
  if (/[\s<>"]/.test(s) || at <= 0 || at === s.length - 1 || s.indexOf("@") !== at) return "email must be an address such as name@example.com";
  const domain = s.slice(at + 1);
  if (!domain.includes(".") || domain.startsWith(".") || domain.endsWith(".")) return "email's domain must have a dot, as name@example.com";
  if (/[^!-~]/.test(s)) return "email must be printable ASCII";
  return "";
}

async function loadStaff() {
  const list = (await api("GET", "/api/console/staff")).data;
  $("staff-rows").replaceChildren(...list.map(row));
}

// row is one person: their account, and a small form to change their role
// and to disable or enable them, named (a group) by their email.
function row(m, i) {
  const id = "st" + i;
  const select = el("select", { id: id + "-role", name: "role" },
    ...ROLES.map(([v, label]) => el("option", { value: v, text: label, ...(v === m.role ? { selected: true } : {}) })));
  const err = el("p", { id: id + "-e", class: "error", role: "alert" });
  const change = el("button", { type: "submit", text: "Change role" });
  const toggle = el("button", { type: "button", text: m.enabled ? "Disable" : "Enable", class: m.enabled ? "danger" : "" });
  const form = el("form", { class: "person", role: "group", "aria-labelledby": id + "-email", novalidate: true },
    el("label", { for: id + "-role", text: "Role" }), select, change, toggle, err);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    send({ email: m.email, role: select.value }, "role", err, (n) => "The role of " + n.email + " is now " + ROLE_NAME[n.role] + ".");
  });
  toggle.addEventListener("click", () => {
    const what = m.enabled ? "disable" : "enable";
    send({ email: m.email }, what, err, (n) => n.email + " is " + (n.enabled ? "enabled" : "disabled") + ".");
  });
  const signIn = m.status === "FORCE_CHANGE_PASSWORD" ? "invited, not signed in yet" : m.status === "CONFIRMED" ? "has signed in" : m.status;
  return el("tr", {},
    el("th", { scope: "row" }, el("span", { id: id + "-email", class: "email", text: m.email }),
      el("span", { class: "account", text: (ROLE_NAME[m.role] || m.role) + " · " + (m.enabled ? "enabled" : "disabled") + " · " + signIn })),
    el("td", {}, form));
}

// send sends a change; the API's refusal (the last admin, say) is
// shown beside the person's controls as it says it.
async function send(body, what, err, done) {
  err.textContent = "";
  try {
    const n = (await api("POST", "/api/console/staff/" + what, body)).data;
    await loadStaff();
    $("status").textContent = done(n);
  } catch (e) { err.textContent = e.message; }
}

async function invite(ev) {
  ev.preventDefault();
  const input = $("invite-email");
  const why = emailProblem(input.value);
  $("invite-email-e").textContent = why ? "The " + why + "." : "";
  input.setAttribute("aria-invalid", why ? "true" : "false");
  $("invite-error").textContent = "";
  if (why) { input.focus(); return; }
  try {
    const n = (await api("POST", "/api/console/staff", { email: input.value.trim(), role: $("invite-role").value })).data;
    input.value = "";
    await loadStaff();
    $("status").textContent = "Invited " + n.email + " as " + ROLE_NAME[n.role] + ": Cognito emails them a temporary password.";
  } catch (e) { $("invite-error").textContent = e.message; }
}

$("invite").addEventListener("submit", invite);

register("staff", {
  title: "Staff",
  admin: true,
  load: loadStaff,
  clear: () => { $("staff-rows").replaceChildren(); $("invite-email").value = ""; },
});
