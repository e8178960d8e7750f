// The webhooks that keep failing, for operators and admins (console.md,
// "Failing webhooks"): #webhooks, what `stampctl webhooks failing` shows.
import { $, el, api, register } from "./core.js";

const when = (t) => (t ? new Date(t).toLocaleString() : "—");

async function loadFailing() {
  const list = (await api("GET", "/api/console/webhooks/failing")).data;
  $("webhook-rows").replaceChildren(...list.map((f) => {
    const a = f.last_attempt;
    const last = a ? (a.status ? "HTTP " + a.status : "No answer") + " at " + when(a.at) + " (attempt " + a.attempt + ")" : "—";
    return el("tr", {},
      el("th", { scope: "row", text: f.owner + (f.livemode ? "" : " (test)") }),
      el("td", { text: last }),
      el("td", { text: String(f.waiting) }),
      el("td", { text: when(f.next_attempt_at) }),
      el("td", { text: when(f.oldest_event_at) }),
      el("td", { text: f.enabled ? "Enabled" : "Disabled (410)" }),
      el("td", { text: f.webhook }),
      el("td", { class: "wrap", text: f.url }));
  }));
  const none = list.length === 0;
  $("webhooks-none").hidden = !none;
  $("webhooks-table").hidden = none;
}

$("webhooks-refresh").addEventListener("click", () => loadFailing().catch((e) => { $("status").textContent = e.message; }));

register("webhooks", {
  title: "Failing webhooks",
  load: loadFailing,
  clear: () => { $("webhook-rows").replaceChildren(); },
});
