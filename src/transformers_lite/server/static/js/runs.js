// The runs: the picker (refreshed while the page is open), the run panel (parameters, curves,
// hyperparameters, token embeddings), and a run that is still training watched until it ends (before its
// first checkpoint: its panel from what it has written so far, its model's views once it has one).
import { $, api, el, guard, runPath, setStatus, showError, state, svgEl, visible } from "./dom.js";
import { lineChart } from "./scales.js";

const WATCH_MS = 5000;  // how often a training run (its model loaded or not yet) and the run list are read again
const VIEWS = { generate: "view-generator", classify: "view-classifier", translate: "view-seq2seq" };
let watching = null;
let hooks = { select: async () => {}, timeline: async () => {} };  // what the views do with a run (main.js)

// select(info): the views that need the model, once it is loaded; timeline(picked): the training timeline,
// from its start when the run was just picked, else its newest snapshots
export function onRun(select, timeline) { hooks = { select, timeline }; }

function fillPicker(runs) {
  const picker = $("run-picker");
  const chosen = picker.value;
  picker.replaceChildren(...runs.map((r) => el("option", { value: r.name }, `${r.name} (${r.family})`)));
  if (runs.some((r) => r.name === chosen)) picker.value = chosen;
  picker.disabled = runs.length < 2;
}

export async function loadRuns() {
  const { runs } = await api("/api/runs");
  state.runs = runs;
  fillPicker(runs);
  $("run-picker").addEventListener("change", guard(() => selectRun($("run-picker").value)));
  setInterval(refreshRuns, 2 * WATCH_MS);
  if (runs.length) await selectRun(runs[0].name);
  else setStatus("no runs yet: train one (tlite train ...) and it appears here");
}

async function refreshRuns() {  // new runs appear in the picker without a reload; a deleted one leaves it
  const fresh = await api("/api/runs").catch(() => null);
  if (!fresh) return;
  const names = (list) => list.map((r) => r.name).join("\n");
  if (names(fresh.runs) === names(state.runs)) return;
  state.runs = fresh.runs;
  fillPicker(fresh.runs);
  const gone = state.run && !fresh.runs.some((r) => r.name === state.run);
  if (gone) {  // the run on view left the folder: nothing of it stays on the page
    const name = state.run;
    clearViews();
    state.run = null;
    setStatus(`${name} is no longer in the folder`);
  }
  if (!state.run && fresh.runs.length) await selectRun(fresh.runs[0].name).catch((e) => showError(e.message));
}

function clearViews() {  // nothing of the run before stays under the new name
  for (const id of Object.values(VIEWS)) $(id).hidden = true;
  $("view-forward").hidden = $("run-panel").hidden = true;
}

export async function selectRun(name) {
  showError("");
  clearTimeout(watching);
  clearViews();
  state.run = name;
  state.info = null;
  $("run-family").textContent = "";
  setStatus(`loading ${name}\u2026`);
  let info;
  try {
    info = await api(runPath(name));
  } catch (e) {  // a damaged run (a run still training answers with what it has so far): said once
    if (state.run !== name) return;
    setStatus("");
    showError(e.message);
    return;
  }
  if (state.run !== name) return;  // another run was picked meanwhile
  await showRun(info, true);
  document.body.dataset.ready = "1";
}

// the run panel from the run's info; the views that need its model (the walk, generation, ...) once it is
// loaded (`ready`): a run still training before its first checkpoint shows its settings, curves and
// timeline so far, and opens them by itself when that checkpoint is written
async function showRun(info, picked) {
  const opens = info.ready && (picked || !state.info || !state.info.ready);
  state.info = info;
  $("run-family").textContent = info.family;
  renderRunPanel(info);
  showTraining(info);
  const jobs = [hooks.timeline(picked)];
  if (opens) {
    for (const [action, id] of Object.entries(VIEWS)) $(id).hidden = !info.actions.includes(action);
    jobs.push(hooks.select(info));
  }
  await Promise.all(jobs);
  if (state.run !== info.name) return;
  setStatus(info.training ? `${info.name} is training: ${progress(info.training)}` : "");  // on the first screen too
  if (opens) await loadEmbeddings();
  else if (!info.ready) $("embeddings").replaceChildren(el("p", { className: "muted" }, "the token embeddings are shown from the run's first checkpoint on"));
  watch(info);
}

// a run that is still training, or whose model is not there yet: its info (curves, where it stands) and
// snapshots are fetched again every few seconds, until it has finished or another run is picked. Each
// answer is a 200 with the run's state, so waiting logs nothing in the browser's console.
function watch(info) {
  clearTimeout(watching);
  if (!info.training && info.ready) return;
  const name = info.name;
  watching = setTimeout(async () => {
    if (state.run !== name) return;
    let fresh;
    try {
      fresh = await api(runPath(name));
    } catch (e) {  // its training stopped before a checkpoint, or the folder went: say why, stop asking
      if (state.run === name) showError(e.message);
      return;
    }
    if (state.run === name) await showRun(fresh, false).catch((e) => showError(e.message));
  }, WATCH_MS);
}

function showTraining(info) {
  const box = $("run-training");
  const training = info.training;
  box.hidden = !training && info.ready;
  if (box.hidden) return;
  if (!training) {  // the training ended a moment ago, or a file is between two writes
    box.textContent = `its model is not loaded yet (${info.waiting}); asking again every ${WATCH_MS / 1000} s`;
    return;
  }
  const model = info.ready ? "" : "; its model opens here with its first checkpoint (the walk, the maps)";
  box.textContent = `still training: ${progress(training)}${model}; the curves and the timeline update as it writes them`;
}

// how far a training has come: its step (of its step limit) and its time (of its budget), as last written
function progress(training) {
  const limit = training.total_steps ? ` of ${training.total_steps.toLocaleString("en")}` : "";
  const budget = training.budget_s ? `, ${Math.max(0, training.budget_s - training.elapsed_s).toFixed(0)} s of the ${(training.budget_s / 60).toFixed(1)}-minute budget left` : "";
  return `step ${training.step.toLocaleString("en")}${limit}, ${training.elapsed_s.toFixed(0)} s in${budget}`;
}

function renderRunPanel(info) {
  $("run-panel").hidden = false;
  $("run-path").textContent = info.preset ? `${info.name} (preset ${info.preset})` : info.name;
  const head = el("tr", {}, el("th", {}, "layer"), el("th", {}, "kind"), el("th", {}, "trainable"), el("th", {}, "fixed"));
  const rows = info.parameters.map((r) => el("tr", {},
    el("td", {}, r.layer), el("td", {}, r.kind),
    el("td", { className: "num" }, r.trainable.toLocaleString("en")), el("td", { className: "num" }, r.fixed.toLocaleString("en"))));
  $("params").replaceChildren(el("thead", {}, head), el("tbody", {}, ...rows));
  $("param-total").textContent = `${info.total_trainable.toLocaleString("en")} trainable, ${info.total_fixed.toLocaleString("en")} fixed`;
  $("hyper").textContent = JSON.stringify(info.hyperparameters, null, 2);
  const losses = Object.entries(info.curves).filter(([k]) => k.endsWith("loss"));
  const others = Object.entries(info.curves).filter(([k]) => !k.endsWith("loss"));
  const charts = [losses, ...others.map((o) => [o])].filter((group) => group.length).map((g) => lineChart(g));
  const notes = (info.notices || []).map((text) => el("p", { className: "notice" }, text));  // e.g. a damaged metrics.csv
  $("curves").replaceChildren(...notes, ...(charts.length ? charts : [el("p", { className: "muted" }, "no training history recorded")]));
}

export async function loadEmbeddings() {
  if (!state.info || !state.info.ready) return;  // a run still training before its first checkpoint: no model yet
  const name = state.run;
  const data = await api(runPath(name, `/embeddings?method=${$("emb-method").value}`));
  if (state.run !== name) return;
  $("emb-notices").textContent = data.notices.join("; ");
  const w = 640, h = 420, pad = 20;
  const xs = data.points.map((p) => p[0]), ys = data.points.map((p) => p[1]);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const sx = (x) => pad + ((x - x0) / (x1 - x0 || 1)) * (w - 2 * pad);
  const sy = (y) => h - pad - ((y - y0) / (y1 - y0 || 1)) * (h - 2 * pad);
  const svg = svgEl("svg", { width: w, height: h, class: "scatter", viewBox: `0 0 ${w} ${h}` });
  const labelled = data.points.length <= 120;
  data.points.forEach(([x, y], i) => {
    const dot = svgEl("circle", { cx: sx(x).toFixed(1), cy: sy(y).toFixed(1), r: 3, fill: "#2f6fb3", "fill-opacity": 0.6 });
    const title = svgEl("title"); title.textContent = data.labels[i]; dot.append(title);
    svg.append(dot);
    if (labelled) {
      const t = svgEl("text", { x: (sx(x) + 4).toFixed(1), y: (sy(y) + 4).toFixed(1) });
      t.textContent = visible(data.labels[i]); svg.append(t);
    }
  });
  $("embeddings").replaceChildren(svg);
}

$("emb-method").addEventListener("change", guard(loadEmbeddings));
