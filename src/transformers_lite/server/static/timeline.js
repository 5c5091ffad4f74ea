// The training timeline: the snapshots the run wrote at step 0 and at each evaluation
// (GET /api/runs/NAME/timeline). A slider scrubs through them: the attention maps of the chosen block
// and head on the probe, the loss of each next token, the sample or prediction, and how far each layer
// moved since the snapshot before; the loss curve beside them with a uniform guess drawn as a line.
"use strict";

const timeline = { data: null, other: null };

async function loadTimeline() {
  timeline.data = await api(runPath(state.run, "/timeline"));
  const snaps = timeline.data.snapshots;
  notices("timeline-notices", timeline.data.notices);
  $("timeline-body").hidden = !snaps.length;
  if (!snaps.length) return;
  const slider = $("timeline-slider");
  slider.max = snaps.length - 1;
  slider.value = snaps.length - 1;
  fillSelect($("timeline-block"), snaps[0].attention ? snaps[0].attention.length : 0, "block");
  fillSelect($("timeline-head"), snaps[0].attention && snaps[0].attention[0] ? snaps[0].attention[0].length : 0, "head");
  $("timeline-block").parentElement.hidden = $("timeline-head").parentElement.hidden = !snaps[0].attention;
  $("timeline-curve").replaceChildren(timelineCurve(snaps, timeline.data.uniform_loss));
  const others = timeline.data.peers || [];  // the other runs of this family, as the server groups them
  const compare = $("timeline-compare");
  const chosen = compare.value;
  compare.replaceChildren(el("option", { value: "" }, "no other run"), ...others.map((name) => el("option", { value: name }, name)));
  compare.value = others.includes(chosen) ? chosen : "";
  if (!compare.value) timeline.other = null;
  renderSnapshot();
}

// a second run of the same family beside this one, at the snapshot nearest the same step
async function loadComparison() {
  const name = $("timeline-compare").value;
  timeline.other = name ? { name, data: await api(runPath(name, "/timeline")) } : null;
  renderSnapshot();
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
    const block = theirs.attention[Math.min(Number($("timeline-block").value || 0), theirs.attention.length - 1)];
    const matrix = block[Math.min(Number($("timeline-head").value || 0), block.length - 1)];
    parts.push(heatmap(matrix, theirs.target_tokens || theirs.tokens, theirs.tokens, `${timeline.other.name}, step ${theirs.step}`));
  }
  if (theirs.sample !== undefined) parts.push(el("pre", { className: "sample" }, theirs.sample));
  if (theirs.translation !== undefined) parts.push(el("p", {}, `translation: ${theirs.translation}`));
  box.replaceChildren(...parts);
}

function renderSnapshot() {
  const snaps = timeline.data.snapshots;
  const snap = snaps[Number($("timeline-slider").value)];
  const scores = Object.entries(snap.scores).map(([k, v]) => `${k} ${v.toFixed(4)}`).join(" | ");
  $("timeline-step").textContent = `step ${snap.step}${scores ? ": " + scores : " (before training)"}`;
  const out = [];
  if (snap.sample !== undefined) out.push(el("pre", { className: "sample" }, snap.sample));
  if (snap.translation !== undefined) out.push(el("p", {}, `translation of \u201c${snap.source ?? snap.tokens.join(" ")}\u201d: ${snap.translation}`));
  if (snap.probabilities) {
    const classes = timeline.data.classes;
    const box = el("div", { className: "bars" });
    bars(box, snap.probabilities.map((p, i) => [classes[i] ?? String(i), p]), classes[snap.label], (label) => label);
    out.push(box);
  }
  $("timeline-output").replaceChildren(...out);
  if (snap.attention) {
    const block = snap.attention[Math.min(Number($("timeline-block").value || 0), snap.attention.length - 1)];
    const matrix = block[Math.min(Number($("timeline-head").value || 0), block.length - 1)];
    const what = snap.target_tokens ? "cross-attention (reference tokens reading the source)" : "attention";
    $("timeline-attention").replaceChildren(heatmap(matrix, snap.target_tokens || snap.tokens, snap.tokens, `${what} at step ${snap.step}`));
  } else {  // snapshots of an earlier release of the translator kept its translation only
    $("timeline-attention").replaceChildren(el("p", { className: "muted" }, "no attention map in this run's snapshots"));
  }
  const losses = snap.token_losses || [];
  $("timeline-losses").previousElementSibling.hidden = !losses.length;
  const max = Math.max(...losses, 1e-9);
  const next = snap.target_tokens ? [...snap.target_tokens.slice(1), "<eos>"] : snap.tokens.slice(1);  // what each loss predicts
  $("timeline-losses").replaceChildren(...losses.map((l, i) => {
    const chip = el("span", { className: "chip", title: `loss ${l}` }, visible(next[i] ?? ""));
    chip.style.background = heat(l, max);
    if (l / max > 0.5) chip.style.color = "white";  // legible on the darker cells
    chip.dataset.loss = l;
    return chip;
  }));
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
