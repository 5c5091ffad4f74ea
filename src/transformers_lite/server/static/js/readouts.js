// What is read out of one forward trace, under the walk: the output (next-token bars or class
// probabilities) at the followed position `pos` and how far switching steps off moved it, the prediction
// read out at each block boundary (the logit lens), and each head's mean attention distance.
import { $, el, visible } from "./dom.js";
import { bars } from "./scales.js";

function outputEntries(data, pos) {
  const probs = data.steps.find((s) => s.name === "probabilities");
  if (data.classes.length) return data.classes.map((c, i) => [c, probs.values[i]]);
  if (probs.top) return probs.top[Math.min(pos, probs.top.length - 1)].map((e) => [e.token ?? String(e.id), e.value]);
  const row = probs.values[Math.min(pos, probs.values.length - 1)];
  const vocab = data.vocabulary || [];
  return row.map((p, i) => [vocab[i] ?? String(i), p]).sort((a, b) => b[1] - a[1]).slice(0, 10);
}

export function renderOutput(data, pos) {
  bars($("trace-output"), outputEntries(data, pos), null, data.classes.length ? (label) => label : visible);
  const off = data.switched_off;
  let change = "";
  if (off && off.largest_at !== undefined) {  // per position: the one followed, and where it moved most
    change = `switched off: ${off.steps.join(", ")}; at position ${pos} a probability moved by at most ${off.change_at_position.toFixed(4)}; ` +
      `at any position by ${off.largest_probability_change.toFixed(4)} (position ${off.largest_at}, after ${visible(off.largest_at_token)})`;
  } else if (off) {
    change = `switched off: ${off.steps.join(", ")}; largest change of a probability ${off.largest_probability_change.toFixed(4)}`;
  }
  $("trace-change").textContent = change || (data.classes.length ? "(class probabilities)" : `(after position ${pos})`);
}

export function renderLens(data) {
  const show = data.classes.length ? (label) => label : visible;
  $("trace-lens").replaceChildren(...data.lens.map((r) => el("tr", {}, el("th", {}, r.at),
    ...r.top.map((t) => el("td", {}, `${show(t.token)} ${t.p.toFixed(3)}`)))));
}

export function renderDistance(data) {  // each head's distance beside what even attention over the same keys gives
  const even = data.attention_distance_uniform || {};
  const heads = Math.max(0, ...Object.values(data.attention_distance).map((h) => h.length));
  const head = el("tr", {}, el("th", {}, "layer"), ...Array.from({ length: heads }, (_, h) => el("th", {}, `head ${h}`)),
    el("th", {}, "even attention"));
  $("trace-distance").replaceChildren(head, ...Object.entries(data.attention_distance).map(([name, values]) =>
    el("tr", {}, el("th", {}, name), ...values.map((d) => el("td", { className: "num" }, d.toFixed(2))),
      el("td", { className: "num muted" }, name in even ? even[name][0].toFixed(2) : ""))));
}
