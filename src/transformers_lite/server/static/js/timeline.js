// The training timeline: the snapshots the run wrote at step 0 and at each evaluation
// (GET /api/runs/NAME/timeline). A slider scrubs through them: the attention maps of the chosen block
// and head on the probe, the loss of each next token, the sample or prediction, and how far each layer
// moved since the snapshot before; the loss curve beside them with a uniform guess drawn as a line.
// Every snapshot is drawn on the same scales (attention 0-1, the losses up to the largest of any
// snapshot), so moving the slider shows the model change, not the colours.
import { $, api, el, fillSelect, guard, notices, runPath, state, visible } from "./dom.js";
import { bars, heatmap, legend, lineChart, lossScale, probabilityScale } from "./scales.js";

const timeline = { data: null, other: null, losses: null };

// the timeline's answer, for the replay to read too (null: another run was picked meanwhile)
export async function loadTimeline() {
  const name = state.run;
  const data = await api(runPath(name, "/timeline"));
  if (state.run !== name) return null;
  const slider = $("timeline-slider");
  const atEnd = !timeline.data || Number(slider.value) === Number(slider.max);  // a live run: follow the newest
  timeline.data = data;
  const snaps = data.snapshots;
  notices("timeline-notices", data.notices);
  $("timeline-body").hidden = !snaps.length;
  if (!snaps.length) return data;
  slider.max = snaps.length - 1;
  slider.value = atEnd ? snaps.length - 1 : Math.min(Number(slider.value), snaps.length - 1);
  const heads = snaps[0].attention && snaps[0].attention[0] ? snaps[0].attention[0].length : 0;
  if ($("timeline-block").options.length !== (snaps[0].attention ? snaps[0].attention.length : 0)) {
    fillSelect($("timeline-block"), snaps[0].attention ? snaps[0].attention.length : 0, "block");
    fillSelect($("timeline-head"), heads, "head");
  }
  $("timeline-block").parentElement.hidden = $("timeline-head").parentElement.hidden = !snaps[0].attention;
  $("timeline-curve").replaceChildren(timelineCurve(snaps, data.uniform_loss));
  const maxLoss = Math.max(...snaps.flatMap((s) => s.token_losses || []), data.uniform_loss || 0, 1e-9);
  timeline.losses = lossScale(maxLoss, "loss of the next token (every snapshot on one scale)");
  const others = data.peers || [];  // the other runs of this family, as the server groups them
  const compare = $("timeline-compare");
  const chosen = compare.value;
  compare.replaceChildren(el("option", { value: "" }, "no other run"), ...others.map((n) => el("option", { value: n }, n)));
  compare.value = others.includes(chosen) ? chosen : "";
  if (!compare.value) timeline.other = null;
  renderSnapshot();
  return data;
}

export function resetTimeline() {
  timeline.data = timeline.other = null;
  $("timeline-block").replaceChildren();
  $("timeline-head").replaceChildren();
}

// a second run of the same family beside this one, at the snapshot nearest the same step
async function loadComparison() {
  const name = $("timeline-compare").value;
  timeline.other = name ? { name, data: await api(runPath(name, "/timeline")) } : null;
  renderSnapshot();
}

function attentionOf(snap) {
  const block = snap.attention[Math.min(Number($("timeline-block").value || 0), snap.attention.length - 1)];
  return block[Math.min(Number($("timeline-head").value || 0), block.length - 1)];
}

function renderComparison(snap) {
  const box = $("timeline-other");
  if (!timeline.other || !timeline.other.data.snapshots.length) {
    box.replaceChildren(...(timeline.other ? [el("p", { className: "muted" }, `${timeline.other.name} has no training snapshots`)] : []));
    return;
  }
  const theirs = timeline.other.data.snapshots.reduce((best, s) => (Math.abs(s.step - snap.step) < Math.abs(best.step - snap.step) ? s : best));
  const same = JSON.stringify(theirs.tokens) === JSON.stringify(snap.tokens);
  const parts = [el("p", {}, `${timeline.other.name} at step ${theirs.step}` + (theirs.scores.val_loss !== undefined ? `: val_loss ${theirs.scores.val_loss.toFixed(4)}` : "") +
    (same ? " (the same validation example)" : " (another validation example: the runs read different data)"))];
  if (theirs.attention) {
    parts.push(heatmap(attentionOf(theirs), { rows: theirs.target_tokens || theirs.tokens, cols: theirs.tokens,
      s: probabilityScale("attention weight"), title: `${timeline.other.name}, step ${theirs.step}`, fit: 260 }));
  }
  if (theirs.sample !== undefined) parts.push(el("pre", { className: "sample" }, theirs.sample));
  if (theirs.translation !== undefined) parts.push(el("p", {}, `translation: ${theirs.translation}`));
  box.replaceChildren(...parts);
}

function renderSnapshot() {
  const { snapshots: snaps, classes } = timeline.data;
  const snap = snaps[Number($("timeline-slider").value)];
  const scores = Object.entries(snap.scores).map(([k, v]) => `${k} ${v.toFixed(4)}`).join(" | ");
  const between = snap.step === 0 ? " (before training)" : " (between evaluations: no scores)";
  $("timeline-step").textContent = `step ${snap.step}${scores ? ": " + scores : between}`;
  const out = [];
  if (snap.sample !== undefined) out.push(el("pre", { className: "sample" }, snap.sample));
  if (snap.translation !== undefined) out.push(el("p", {}, `translation of \u201c${snap.source ?? snap.tokens.join(" ")}\u201d: ${snap.translation}`));
  if (snap.probabilities) {
    const box = el("div", { className: "bars" });
    bars(box, snap.probabilities.map((p, i) => [classes[i] ?? String(i), p]), classes[snap.label], (label) => label, "true label");
    out.push(box);
  }
  $("timeline-output").replaceChildren(...out);
  if (snap.attention) {
    const what = snap.target_tokens ? "cross-attention (reference tokens reading the source)" : "attention";
    $("timeline-attention").replaceChildren(heatmap(attentionOf(snap), { rows: snap.target_tokens || snap.tokens, cols: snap.tokens,
      s: probabilityScale("attention weight"), title: `${what} at step ${snap.step}`, fit: 260, rowTitle: "reading", colTitle: "read" }));
  } else {  // snapshots of an earlier release of the translator kept its translation only
    $("timeline-attention").replaceChildren(el("p", { className: "muted" }, "no attention map in this run's snapshots"));
  }
  const losses = snap.token_losses || [];
  $("timeline-losses").previousElementSibling.hidden = !losses.length;
  const next = snap.target_tokens ? [...snap.target_tokens.slice(1), "<eos>"] : snap.tokens.slice(1);  // what each loss predicts
  const s = timeline.losses;
  $("timeline-losses").replaceChildren(...losses.map((l, i) => {
    const chip = el("span", { className: "chip", title: `loss ${l}` }, visible(next[i] ?? ""));
    chip.style.background = s.css(l);
    if (s.at(l) > 0.6) chip.style.color = "white";  // legible on the darker cells
    chip.dataset.loss = l;
    return chip;
  }));
  $("timeline-loss-legend").replaceChildren(...(losses.length ? [legend(s)] : []));
  for (const [id, norms] of [["timeline-grads", snap.grad_norms], ["timeline-updates", snap.update_norms]]) {
    const top = Object.entries(norms || {}).sort((a, b) => b[1] - a[1]).slice(0, 10);
    bars($(id), top, null, (label) => label);
  }
  renderComparison(snap);
}

function timelineCurve(snaps, uniform) {
  const points = snaps.filter((s) => s.scores.val_loss !== undefined);
  const series = [["val_loss", { step: points.map((s) => s.step), value: points.map((s) => s.scores.val_loss) }]];
  if (uniform !== null && points.length) {
    const steps = [snaps[0].step, snaps[snaps.length - 1].step];
    series.push(["uniform guess", { step: steps, value: [uniform, uniform] }]);
  }
  return lineChart(series);
}

$("timeline-slider").addEventListener("input", () => renderSnapshot());
$("timeline-block").addEventListener("change", () => renderSnapshot());
$("timeline-head").addEventListener("change", () => renderSnapshot());
$("timeline-compare").addEventListener("change", guard(loadComparison));
