// The backward pass, step by step: one example's loss backpropagated through the run's model
// (POST /api/runs/NAME/backward), from the logits back to the embedding rows, each step's gradient as a
// signed heatmap with the posts' hand-derived rule and its difference to autograd, the parameters'
// gradient norms and gradient x input per token.
"use strict";

const backward = { data: null, step: 0 };

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
  renderGradient(data.steps[backward.step], data);
  const params = [...data.parameters].sort((a, b) => b.norm - a.norm).slice(0, 16);
  bars($("backward-params"), params.map((p) => [p.name, p.norm]), null, (label) => label);
  renderAttribution(data);
}

function renderGradient(step, data) {
  const row = (k, v) => el("tr", {}, el("th", {}, k), el("td", {}, v));
  const checked = step.hand_max_diff !== undefined;
  const hand = checked
    ? `${step.rule}; norm ${step.hand_norm.toPrecision(6)}; largest difference to autograd ${step.hand_max_diff.toExponential(2)}`
    : `autograd only: no hand rule (${step.no_hand_rule})`;
  $("backward-step-info").replaceChildren(
    row("step", `${backward.step + 1} / ${data.steps.length}: \u2202L/\u2202(${step.name}), a ${step.kind || "loss"} step`),
    row("shape", `(${step.shape.join(", ")})`),
    row("autograd", `norm ${step.norm.toPrecision(6)}`),
    row("hand-derived", hand),
  );
  const view = $("backward-view");
  if (!step.values) {
    view.replaceChildren(el("p", { className: "muted" }, `${step.shape.join(" \u00d7 ")} values: the norm only`));
    return;
  }
  const onSource = data.source_tokens.length && step.name.startsWith("encoder.");
  const rows = onSource ? data.source_tokens : data.tokens;
  const head = Number($("trace-head").value || 0);
  const perHead = step.shape.length === 3;
  const what = perHead ? `head ${Math.min(head, step.shape[0] - 1)}` : step.name;
  const maps = [signedMap(matrixOf(step, head), rows, null, `autograd: ${what}`, false, -1)];
  if (step.hand_values) {  // the posts' rule computed by hand, beside autograd's (hover either for its values)
    maps.push(signedMap(matrixOf({ values: step.hand_values }, head), rows, null, `hand-derived (${step.kinds.join(" + ")}): ${what}`, false, -1));
  }
  view.replaceChildren(...maps);
}

function renderAttribution(data) {
  const max = Math.max(...data.attribution.map(Math.abs), 1e-12);
  const words = data.source_tokens.length ? data.source_tokens : data.tokens;  // a translator's: its source
  $("backward-attribution").replaceChildren(...data.attribution.map((a, i) => {
    const chip = el("span", { className: "chip", title: `${a}` }, visible(words[i] ?? ""));
    chip.style.background = signedHeat(a, max);
    chip.dataset.value = a;
    return chip;
  }));
}

async function takeStep() {
  setStatus("taking one step on a copy of the model\u2026");
  const data = await api(runPath(state.run, "/step"), backward.body);
  setStatus("");
  $("step-summary").textContent = `loss ${data.loss_before.toFixed(4)} \u2192 ${data.loss_after.toFixed(4)} after ${data.optimizer} (learning rate ${data.lr}); the run itself is unchanged`;
  const head = el("tr", {}, el("th", {}, `probability of (${data.at})`), el("th", {}, "before"), el("th", {}, "after"));
  $("step-moved").replaceChildren(el("thead", {}, head), el("tbody", {}, ...data.moved.map((m) =>
    el("tr", {}, el("td", {}, visible(m.label)), el("td", { className: "num" }, m.before.toFixed(4)), el("td", { className: "num" }, m.after.toFixed(4))))));
  $("step-result").hidden = false;
}

$("backward").addEventListener("click", guard(runBackward));
$("take-step").addEventListener("click", guard(takeStep));
$("backward-prev").addEventListener("click", () => { backward.step = Math.max(0, backward.step - 1); renderBackward(); });
$("backward-next").addEventListener("click", () => { backward.step = Math.min(backward.data.steps.length - 1, backward.step + 1); renderBackward(); });
