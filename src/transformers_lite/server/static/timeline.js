// The training timeline: the snapshots the run wrote at step 0 and at each evaluation
// (GET /api/runs/NAME/timeline). A slider scrubs through them: the attention maps of the chosen block
// and head on the probe, the loss of each next token, the sample or prediction, and how far each layer
// moved since the snapshot before; the loss curve beside them with a uniform guess drawn as a line.
"use strict";

const timeline = { data: null };

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
  $("timeline-curve").replaceChildren(timelineCurve(snaps, timeline.data.uniform_loss));
  renderSnapshot();
}

function renderSnapshot() {
  const snaps = timeline.data.snapshots;
  const snap = snaps[Number($("timeline-slider").value)];
  const scores = Object.entries(snap.scores).map(([k, v]) => `${k} ${v.toFixed(4)}`).join(" | ");
  $("timeline-step").textContent = `step ${snap.step}${scores ? ": " + scores : " (before training)"}`;
  const out = [];
  if (snap.sample !== undefined) out.push(el("pre", { className: "sample" }, snap.sample));
  if (snap.translation !== undefined) out.push(el("p", {}, `translation of \u201c${snap.tokens.join(" ")}\u201d: ${snap.translation}`));
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
    $("timeline-attention").replaceChildren(heatmap(matrix, snap.tokens, snap.tokens, `attention at step ${snap.step}`));
  }
  const losses = snap.token_losses || [];
  const max = Math.max(...losses, 1e-9);
  $("timeline-losses").replaceChildren(...losses.map((l, i) => {
    const chip = el("span", { className: "chip", title: `loss ${l}` }, visible(snap.tokens[i + 1] ?? ""));
    chip.style.background = heat(l, max);
    if (l / max > 0.5) chip.style.color = "white";  // legible on the darker cells
    chip.dataset.loss = l;
    return chip;
  }));
  const norms = Object.entries(snap.update_norms || {}).sort((a, b) => b[1] - a[1]).slice(0, 10);
  bars($("timeline-updates"), norms, null, (label) => label);
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
