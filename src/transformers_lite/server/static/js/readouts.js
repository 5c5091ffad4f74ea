// What is read out of one forward trace, under the walk: the output (next-token bars or class
// probabilities) at the followed position `pos` and how far switching steps off moved it, the prediction
// read out at each block boundary (the logit lens), each head's mean attention distance, and the heads
// ranked by what switching each off costs (POST .../sweep).
import { $, api, el, runPath, setStatus, state, visible } from "./dom.js";
import { absMax, bars, legend, signedScale, strip } from "./scales.js";

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

// the heads ranked on the walk's input (`body`: the trace's), or over `windows` windows of a generator's
// validation text
export async function sweep(body, windows) {
  setStatus("switching each head off in turn\u2026");
  const data = await api(runPath(state.run, "/sweep"), { text: body.text, target: body.target, windows });
  setStatus("");
  // the words follow what was ranked: this input, or windows of the validation text
  const where = data.windows ? `averaged over ${data.windows} windows of the validation text` : "on this input";
  $("sweep-title").textContent = `Heads ranked by how much the loss ${where} rises without them`;
  $("sweep-loss").textContent = `(loss with every head: ${data.loss.toFixed(4)})`;
  const head = el("tr", {}, el("th", {}, "head switched off"), el("th", {}, "loss"), el("th", {}, "rise"));
  $("sweep-table").replaceChildren(el("thead", {}, head), el("tbody", {}, ...data.heads.map((h) =>
    el("tr", {}, el("td", {}, h.head), el("td", { className: "num" }, h.loss.toFixed(4)), el("td", { className: "num" }, h.rise.toFixed(4))))));
  $("sweep-result").hidden = false;
}

// the followed position's vector at each (T, C) step of the block on view (a translator's encoder: of the
// source, `source`), every strip on one scale; `shortName` names a step within its block
export function renderStrips(data, source, followed, shortName) {
  const rows = source ? data.source_tokens : data.tokens;
  const pos = Math.min(followed, rows.length - 1);
  $("trace-pos").textContent = `${source ? "(of the source) " : ""}${pos} (${visible(rows[pos] ?? "")})`;
  const chosen = data.steps.filter((step) => step.values && step.shape.length === 2 && step.axes === "(T, C)" && step.shape[0] === rows.length &&
    (step.side === "source") === source);
  const s = signedScale(absMax(chosen.map((step) => step.values[pos])), "value (every strip on one scale)");
  const strips = chosen.flatMap((step) => [el("span", {}, shortName(step.name)), strip(step.values[pos], s)]);
  if (strips.length) strips.push(el("span"), legend(s));
  $("trace-strips").replaceChildren(...strips);
}
