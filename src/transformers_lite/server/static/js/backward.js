// The backward pass, step by step: one example's loss backpropagated through the run's model
// (POST /api/runs/NAME/backward), from the logits back to the embedding rows, each step's gradient on a
// labelled map with the posts' hand-derived rule beside autograd's (one scale for both), its box lit on
// the model's map; the parameters' gradient norms, gradient x input per token, and one optimizer step on
// a copy of the model (POST .../step): AdamW or plain SGD, at the run's peak learning rate or another.
import { $, api, el, guard, notices, runPath, setStatus, showError, state, visible } from "./dom.js";
import { drawDiagram, visibleOutline } from "./diagram.js";
import { absMax, bars, heatmap, legend, lineChart, number, signedScale } from "./scales.js";
import { goTo, trace } from "./forward.js";
import { columnsOf, matrixOf } from "./matrices.js";
import { exercisePanel } from "./exercise.js";

const backward = { data: null, step: 0, body: null };

// the exercise that has a learner write the backward of a step of this kind (tlite exercise list)
const EXERCISE_OF = {
  projection: "dense-backward", "activation:relu": "relu-backward", "activation:gelu": "gelu-backward",
  softmax: "softmax-backward", loss: "cross-entropy-backward", "norm:layer": "layer-norm-backward",
  "norm:rms": "rms-norm-backward", weighted_sum: "batched-matmul-backward", merge_heads: "merge-heads-backward",
  embedding: "embedding-backward", residual_sum: "residual-backward", tied_output: "tied-output-backward",
  scores: "attention-backward", masked: "masked-scores-backward", product: "swiglu-backward",
  "activation:silu": "swiglu-backward", repeat_heads: "grouped-query-attention-backward",
};

export function resetBackward() {
  Object.assign(backward, { data: null, step: 0, body: null });
  $("backward-result").hidden = true;
}

async function runBackward() {
  const body = { text: $("trace-text").value };
  const target = $("trace-target").value.trim();
  const generates = state.info.actions.includes("generate");  // a generator: a position, not a target
  if (target && !generates) body.target = target;
  const position = $("backward-position").value.trim();
  if (position !== "" && generates) body.position = Number(position);
  setStatus("backpropagating\u2026");
  backward.data = await api(runPath(state.run, "/backward"), body);
  backward.body = body;
  $("step-result").hidden = true;
  backward.step = 0;
  setStatus("");
  notices("trace-notices", backward.data.notices);
  $("backward-result").hidden = false;
  renderBackward();
}

function renderBackward() {
  const data = backward.data;
  $("backward-loss").textContent = `loss ${data.loss.toFixed(6)}: ${data.target}`;
  $("backward-steps").replaceChildren(...data.steps.map((s, i) => {
    const mark = s.hand_max_diff !== undefined ? " \u2713" : "";
    const chip = el("span", { className: `step${i === backward.step ? " current" : ""}` }, s.name + mark);
    chip.addEventListener("click", () => { backward.step = i; renderBackward(); });
    return chip;
  }));
  const step = data.steps[backward.step];
  $("backward-step-name").textContent = `${backward.step + 1} / ${data.steps.length}: \u2202L/\u2202(${step.name})`;
  renderGradient(step, data);
  renderBackwardMap(step);
  renderExercise(step).catch((e) => showError(e.message));
  const params = [...data.parameters].sort((a, b) => b.norm - a.norm).slice(0, 16);
  bars($("backward-params"), params.map((p) => [p.name, p.norm]), null, (label) => label);
  renderAttribution(data);
}

// the model's map with the box of this gradient's step lit: the walk back from the loss to the embedding
function renderBackwardMap(step) {
  const outline = trace.data ? trace.data.outline : null;
  if (!outline) { $("backward-map").replaceChildren(); return; }
  const member = (outline.find((s) => s.member) || { member: "" }).member;
  const known = visibleOutline(outline, member).some((s) => s.name === step.name);
  const open = (name) => {  // a box: its first step's gradient, when the backward pass has one
    const i = backward.data.steps.findIndex((s) => s.name === name);
    if (i >= 0) { backward.step = i; renderBackward(); } else guard(goTo)(name);
  };
  $("backward-map").replaceChildren(...drawDiagram(outline, member, known ? step.name : "", open));
}

function renderGradient(step, data) {
  const row = (k, v) => el("tr", {}, el("th", {}, k), el("td", {}, v));
  const checked = step.hand_max_diff !== undefined;
  const rule = checked
    ? `${step.rule}; norm ${step.hand_norm.toPrecision(6)}; largest difference to autograd ${step.hand_max_diff.toExponential(2)}`
    : `autograd only: no hand rule (${step.no_hand_rule})`;
  $("backward-step-info").replaceChildren(
    row("step", `${backward.step + 1} / ${data.steps.length}: \u2202L/\u2202(${step.name}), a ${step.kind || "loss"} step`),
    row("what it says", `how the loss changes as each value of ${step.name} changes; the chain rule gets it from the gradients of the steps that read ${step.name}`),
    row("shape", `(${step.shape.join(", ")})`),
    row("autograd", `norm ${step.norm.toPrecision(6)}`),
    row("hand-derived", rule),
  );
  const view = $("backward-view");
  if (!step.values) {
    view.replaceChildren(el("p", { className: "muted" }, `${step.shape.join(" \u00d7 ")} values: the norm only`));
    return;
  }
  const onSource = step.side === "source";  // a translator's encoder: its rows are the source tokens
  const rows = onSource ? data.source_tokens : data.tokens;
  const head = Number($("trace-head").value || 0);
  const perHead = step.shape.length === 3;
  const what = perHead ? `head ${Math.min(head, step.shape[0] - 1)}` : step.name;
  const auto = matrixOf(step, head);
  const hand = step.hand_values ? matrixOf({ values: step.hand_values }, head) : null;
  const s = signedScale(absMax([auto, hand || []]), "\u2202L/\u2202x (autograd and the hand rule on one scale)");
  const { cols, colTitle } = columnsOf(step, data, trace.data || {});  // keys, source tokens, the vocabulary's tokens, classes
  const options = { rows: auto.length === rows.length ? rows : null, cols, s, rowTitle: auto.length === rows.length ? "position" : "row", colTitle };
  const maps = [heatmap(auto, { ...options, title: `autograd: ${what}` })];
  if (hand) maps.push(heatmap(hand, { ...options, title: `hand-derived (${step.kinds.join(" + ")}): ${what}` }));
  view.replaceChildren(...maps);
}

function renderAttribution(data) {
  const s = signedScale(absMax(data.attribution), "gradient \u00d7 input");
  const words = data.source_tokens.length ? data.source_tokens : data.tokens;  // a translator's: its source
  $("backward-attribution").replaceChildren(...data.attribution.map((a, i) => {
    const chip = el("span", { className: "chip", title: number(a) }, visible(words[i] ?? ""));
    chip.style.background = s.css(a);
    chip.dataset.value = a;
    return chip;
  }), legend(s));
}

// "try it yourself": the exercise of this step's kind (exercise.js), on this run's tensors
const panel = exercisePanel($("exercise"), "exercise");

async function renderExercise(step) {
  const own = step.name === "logits" ? "cross-entropy-backward" : EXERCISE_OF[step.kind];
  await panel.show(own ? [own] : []);
}

async function takeStep() {
  setStatus("taking one step on a copy of the model\u2026");
  const lr = $("step-lr").value.trim();
  const body = { ...backward.body, optimizer: $("step-optimizer").value, ...(lr ? { lr: Number(lr) } : {}) };
  const data = await api(runPath(state.run, "/step"), body);
  setStatus("");
  const rates = `learning rate ${data.lr}${data.lr === data.peak_lr ? " (the run's peak" : ` (the run's peak: ${data.peak_lr}`}` +
    `${data.end_lr !== null ? `; its training ended at ${data.end_lr.toPrecision(3)})` : ")"}`;
  $("step-summary").textContent = `loss ${data.loss_before.toFixed(4)} \u2192 ${data.loss_after.toFixed(4)} after ${data.optimizer}; ${rates}; the run itself is unchanged`;
  const head = el("tr", {}, el("th", {}, `probability of (${data.at})`), el("th", {}, "before"), el("th", {}, "after"));
  $("step-moved").replaceChildren(el("thead", {}, head), el("tbody", {}, ...data.moved.map((m) =>
    el("tr", {}, el("td", {}, visible(m.label)), el("td", { className: "num" }, m.before.toFixed(4)), el("td", { className: "num" }, m.after.toFixed(4))))));
  bars($("step-updates"), data.updates.slice(0, 12).map((u) => [u.name, u.norm]), null, (label) => label);
  renderSpectra(data.spectra);
  $("step-result").hidden = false;
}

// Muon: a matrix's gradient singular values beside its update's, each over its largest (largest first)
function renderSpectra(spectra) {
  $("step-spectra").hidden = !spectra.length;
  if (!spectra.length) return;
  const pick = $("step-matrix");
  pick.replaceChildren(...spectra.map((s, i) => el("option", { value: i }, `${s.name} (${s.shape.join(" \u00d7 ")})`)));
  const draw = () => {
    const s = spectra[Number(pick.value)];
    // one example's gradient has rank at most the positions it scores: past its rank both are zero
    const rank = Math.max(1, s.gradient.filter((v) => v > 1e-6 * s.gradient[0]).length);
    const first = (values) => values.slice(0, rank);
    const series = (name, values) => [name, { step: first(values).map((_, i) => i + 1), value: first(values).map((v) => v / (values[0] || 1)) }];
    $("step-rank").textContent = `This gradient has rank ${rank} of ${Math.min(...s.shape)} (one example scores few positions): ` +
      `the update moves those ${rank} directions alike and, like the gradient, none of the others.`;
    $("step-spectrum").replaceChildren(lineChart([series("gradient", s.gradient), series("Muon's update", s.update)], "singular value, largest first"));
  };
  pick.onchange = draw;
  draw();
}

$("backward").addEventListener("click", guard(runBackward));
$("take-step").addEventListener("click", guard(takeStep));
$("backward-prev").addEventListener("click", () => { backward.step = Math.max(0, backward.step - 1); renderBackward(); });
$("backward-next").addEventListener("click", () => { backward.step = Math.min(backward.data.steps.length - 1, backward.step + 1); renderBackward(); });

