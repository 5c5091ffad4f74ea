// How it learned: a replay of training at the token level, from the run's snapshots on its probe text
// (GET /api/runs/NAME/timeline: `snapshots` and `replay`, read by inspect/replay.py). A slider and a play
// button move through the snapshots; each frame shows the loss at every position (one row per snapshot, the
// frame's row outlined, on one loss scale for every snapshot), which tokens the model had learned by then
// (a position is learned when its loss fell halfway from its first value to its last), every head's
// attention on the fixed 0-1 scale, and when each head found its pattern: its strength over the steps
// against a uniform head's, and the step at which it formed. A second run of the same family and tokenizer
// replays beside it on one time axis (the optimizer step, or the fraction of each run's training).
import { $, api, el, guard, notices, runPath, state, visible } from "./dom.js";
import { heatmap, legend, lineChart, lossScale, probabilityScale } from "./scales.js";

const replay = { data: null, key: "", other: null, head: 0, timer: null, losses: null };
// the patterns inspect/replay.py measures: a head reading the token before (previous), or the token after an
// earlier copy of the current one (induction)
const PATTERNS = { previous: "previous token", induction: "induction" };

// the snapshots the replay reads: those of its probe text (replay.steps), in step order
function framesOf(data) {
  const steps = new Set((data.replay && data.replay.steps) || []);
  return data.snapshots.filter((s) => steps.has(s.step));
}

export function showReplay(data) {
  const frames = framesOf(data);
  const usable = frames.length > 1 && data.replay.tokens && frames[0].token_losses;
  notices("replay-notices", usable ? [] : [data.snapshots.length ? "this run's snapshots hold no loss per token of one probe text (a classifier's or a translator's, or too few): nothing to replay"
    : "this run kept no training snapshots (train with --snapshots N)"]);
  $("replay-body").hidden = !usable;
  const key = `${state.run}\u0000${JSON.stringify(data.replay && data.replay.tokens)}`;
  const fresh = replay.key !== key;  // another run or probe: from its end, its first formed head charted
  Object.assign(replay, { data, key });
  if (!usable) return;
  const slider = $("replay-slider");
  const atEnd = fresh || Number(slider.value) === Number(slider.max);  // a run still training: follow the newest
  slider.max = frames.length - 1;
  slider.value = atEnd ? frames.length - 1 : Math.min(Number(slider.value), frames.length - 1);
  const picked = $("replay-beside").value;
  const others = data.comparable || [];
  $("replay-beside").replaceChildren(el("option", { value: "" }, "no other run"), ...others.map((n) => el("option", { value: n }, n)));
  $("replay-beside").value = others.includes(picked) ? picked : "";
  if (!$("replay-beside").value) replay.other = null;
  if (fresh) replay.head = firstFormed(data.replay.heads || []);
  scaleLosses();
  renderFrame();
}

export function resetReplay() {
  stop();
  Object.assign(replay, { data: null, key: "", other: null, head: 0 });
  $("replay-beside").value = "";
}

// the head to chart first: the clearest previous-token head, the one whose last strength stands furthest
// above a uniform head's (else the first head)
function firstFormed(heads) {
  let best = 0;
  const above = (h) => h.previous.strength.at(-1) - h.previous.uniform;
  heads.forEach((h, i) => { if (above(h) > above(heads[best])) best = i; });
  return best;
}

// one loss scale for every frame of both runs: from 0 to the largest loss of any position at any snapshot
function scaleLosses() {
  const all = [replay.data, replay.other && replay.other.data].filter(Boolean).flatMap((d) => framesOf(d).flatMap((s) => s.token_losses || []));
  replay.losses = lossScale(Math.max(...all, 1e-9), "loss of the next token (every snapshot on one scale)");
}

function time(frames, i) {  // the frame's place on the shared time axis
  const last = frames.at(-1).step || 1;
  return $("replay-axis").value === "fraction" ? frames[i].step / last : frames[i].step;
}

function nearest(frames, t) {  // the other run's frame nearest a time
  let best = 0;
  frames.forEach((_, i) => { if (Math.abs(time(frames, i) - t) < Math.abs(time(frames, best) - t)) best = i; });
  return best;
}

function renderFrame() {
  const data = replay.data, frames = framesOf(data);
  const i = Number($("replay-slider").value);
  const snap = frames[i];
  const fraction = $("replay-axis").value === "fraction" ? ` (${(100 * time(frames, i)).toFixed(0)} % of its training)` : "";
  $("replay-step").textContent = `step ${snap.step}${fraction}: snapshot ${i + 1} of ${frames.length}` +
    (snap.scores.val_loss !== undefined ? `, val_loss ${snap.scores.val_loss.toFixed(4)}` : "");
  const mine = [el("div", {}, ...runFrame(state.run, data, i, true))];
  $("replay-axis").parentElement.hidden = !replay.other;
  if (replay.other) {
    const theirs = framesOf(replay.other.data);
    if (theirs.length) {
      const j = nearest(theirs, time(frames, i));
      mine.push(el("div", { className: "replay-other" }, ...runFrame(replay.other.name, replay.other.data, j, false)));
    } else {
      mine.push(el("p", { className: "muted" }, `${replay.other.name} holds no snapshots to replay`));
    }
  }
  $("replay-frames").replaceChildren(...mine);
  $("replay-frames").classList.toggle("two", Boolean(replay.other));
  renderPatterns(frames, i);
}

// one run's frame: its losses (every snapshot a row, this one outlined), the tokens learned by then, its heads
function runFrame(name, data, i, own) {
  const frames = framesOf(data), snap = frames[i], tokens = data.replay.tokens;
  // what each loss predicts: a generator's next token (position t's loss is token t + 1's), a translator's
  // next reference token (its snapshots' losses are the reference's, teacher-forced, then the end)
  const last = frames.at(-1);
  const next = last.target_tokens ? [...last.target_tokens.slice(1), "<eos>"] : tokens.slice(1);
  const s = replay.losses;
  const rows = frames.map((f) => f.token_losses);
  const same = JSON.stringify(tokens) === JSON.stringify(replay.data.replay.tokens);
  const title = `${own ? "this run" : `${name}${same ? "" : " (another probe text: the runs read other data)"}`}: step ${snap.step} outlined`;
  const map = heatmap(rows, { rows: frames.map((f) => String(f.step)), cols: next, s, followed: i, rowTitle: "step", colTitle: "next token", title, fit: 300 });
  map.classList.add("replay-losses");
  const learned = data.replay.learned || [];
  const chips = snap.token_losses.map((l, t) => {
    const done = learned[t] !== null && learned[t] !== undefined && learned[t] <= snap.step;
    const chip = el("span", { className: `chip${done ? " learned" : ""}`, title: `loss ${l.toFixed(3)}; learned ${learned[t] === null ? "not yet (its loss did not fall by half)" : `at step ${learned[t]}`}` }, visible(next[t] ?? ""));
    chip.style.background = s.css(l);
    if (s.at(l) > 0.6) chip.style.color = "white";
    chip.dataset.loss = l;
    return chip;
  });
  const out = [map, el("p", { className: "tokens replay-tokens" }, ...chips), learnedLine(next, learned, snap.step)];
  const what = last.target_tokens ? "cross-attention (the reference's tokens reading the source)" : "attention";
  const formed = (data.replay.heads || []).length ? "(\u2713, outlined green: a previous-token head by then)" : "";
  out.push(el("h4", {}, `Each head's ${what} at step ${snap.step} `, el("span", { className: "muted" }, formed)),
    headMaps(snap, data.replay.heads || [], own));
  return out;
}

// the tokens in the order the model learned them, those learned by this step first and lit
function learnedLine(next, learned, step) {
  const groups = new Map();
  learned.forEach((at, t) => { if (at !== null) groups.set(at, [...(groups.get(at) || []), t]); });
  const parts = [...groups.keys()].sort((a, b) => a - b).map((at) =>
    el("span", { className: `learned-group${at <= step ? " reached" : ""}` }, `step ${at}: `, ...groups.get(at).map((t) => el("span", { className: "chip" }, visible(next[t])))));
  const never = learned.flatMap((at, t) => (at === null ? [t] : []));
  if (never.length) parts.push(el("span", { className: "learned-group muted" }, "not learned: ", ...never.map((t) => el("span", { className: "chip" }, visible(next[t])))));
  const count = learned.filter((at) => at !== null && at <= step).length;
  return el("p", { className: "tokens learned-line" }, el("span", { className: "muted" }, `learned by step ${step}: ${count} of ${learned.length} positions; in order: `), ...parts);
}

function headMaps(snap, heads, own) {
  const s = probabilityScale("attention weight (fixed 0\u20131)");
  const box = el("div", { className: "grid thumbs" });
  (snap.attention || []).forEach((block, b) => block.forEach((weights, h) => {
    const k = heads.findIndex((x) => x.block === b && x.head === h);
    const formed = k >= 0 && heads[k].previous.formed !== null && heads[k].previous.formed <= snap.step;
    const fig = heatmap(weights, { s, title: `block ${b} head ${h}${formed ? " \u2713" : ""}`, small: true });
    if (formed) fig.classList.add("formed");
    if (own && k >= 0) fig.addEventListener("click", () => { replay.head = k; renderFrame(); });
    if (own && k === replay.head) fig.classList.add("chosen");
    box.append(fig);
  }));
  return el("div", {}, box, legend(s));
}

// when each head found its pattern: a table of every head, and the chosen head's strength over time
function renderPatterns(frames, i) {
  const heads = replay.data.replay.heads || [];
  $("replay-patterns-box").hidden = !heads.length;
  if (!heads.length) return;
  const when = (p) => (p.formed === null ? "not formed" : `step ${p.formed}`);
  const head = el("tr", {}, el("th", {}, "head"), ...Object.values(PATTERNS).flatMap((w) => [el("th", {}, `${w}: formed at`),
    el("th", {}, "now (uniform)")]));
  const rows = heads.map((h, k) => {
    const cells = Object.keys(PATTERNS).flatMap((p) => [el("td", { className: "num formed" }, when(h[p])),
      el("td", { className: "num" }, `${h[p].strength[i].toFixed(2)} (${h[p].uniform.toFixed(2)})`)]);
    const row = el("tr", { className: k === replay.head ? "chosen" : "" }, el("td", {}, `block ${h.block} head ${h.head}`), ...cells);
    row.addEventListener("click", () => { replay.head = k; renderFrame(); });
    return row;
  });
  $("replay-patterns").replaceChildren(el("thead", {}, head), el("tbody", {}, ...rows));
  const chosen = heads[Math.min(replay.head, heads.length - 1)];
  const xs = frames.map((_, k) => time(frames, k));
  const series = Object.entries(PATTERNS).flatMap(([p, words]) => [[words, { step: xs, value: chosen[p].strength }],
    [`uniform: ${p.slice(0, 4)}.`, { step: [xs[0], xs.at(-1)], value: [chosen[p].uniform, chosen[p].uniform], dashed: true }]]);
  const marks = [{ x: xs[i], label: "now", color: "#6b7785", row: 0 }];
  Object.entries(PATTERNS).forEach(([p], r) => {
    const k = frames.findIndex((f) => f.step === chosen[p].formed);
    if (k >= 0) marks.push({ x: xs[k], label: `${p} formed`, row: r + 1 });
  });
  const other = replay.other && (replay.other.data.replay.heads || []).find((h) => h.block === chosen.block && h.head === chosen.head);
  if (other) {
    const theirs = framesOf(replay.other.data);
    series.push([`${replay.other.name.slice(0, 12)}: prev.`, { step: theirs.map((_, k) => time(theirs, k)), value: other.previous.strength }]);
  }
  const axis = $("replay-axis").value === "fraction" ? "fraction of training" : "optimizer step";
  $("replay-chart").replaceChildren(el("p", { className: "muted" }, `block ${chosen.block} head ${chosen.head}: the mean weight on each pattern's keys, against a uniform head's (dashed)`),
    lineChart(series, axis, { y: [0, 1], marks }));
}

async function pickBeside() {
  const name = $("replay-beside").value;
  replay.other = name ? { name, data: await api(runPath(name, "/timeline")) } : null;
  if (replay.other && !replay.other.data.replay) replay.other.data.replay = { steps: [] };
  scaleLosses();
  renderFrame();
}

function stop() {
  if (replay.timer) clearInterval(replay.timer);
  replay.timer = null;
  $("replay-play").textContent = "\u25b6 play";
}

function play() {
  if (replay.timer) { stop(); return; }
  const slider = $("replay-slider");
  if (Number(slider.value) >= Number(slider.max)) slider.value = 0;
  $("replay-play").textContent = "\u275a\u275a pause";
  renderFrame();
  replay.timer = setInterval(() => {
    if (!replay.data || Number(slider.value) >= Number(slider.max)) { stop(); return; }
    slider.value = Number(slider.value) + 1;
    renderFrame();
  }, 700);
}

$("replay-slider").addEventListener("input", () => renderFrame());
$("replay-play").addEventListener("click", play);
$("replay-beside").addEventListener("change", guard(pickBeside));
$("replay-axis").addEventListener("change", () => { scaleLosses(); renderFrame(); });
