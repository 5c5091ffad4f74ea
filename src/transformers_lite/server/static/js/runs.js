// The runs: the picker (refreshed while the page is open), the run panel (parameters, curves,
// hyperparameters, token embeddings), and a run that is still training watched until it ends.
import { $, api, el, guard, runPath, setStatus, showError, state, svgEl, visible } from "./dom.js";
import { lineChart } from "./scales.js";

const WATCH_MS = 5000;  // how often a training run, a run not ready yet and the run list are read again
const VIEWS = { generate: "view-generator", classify: "view-classifier", translate: "view-seq2seq" };
let watching = null;
let hooks = { select: async () => {}, refresh: async () => {} };  // what the views do with a run (main.js)

export function onRun(select, refresh) { hooks = { select, refresh }; }

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
  } catch (e) {  // a run without its first checkpoint yet: say so and try again, never a stale page
    if (state.run !== name) return;
    setStatus(`${name} cannot be opened yet (${e.message}); trying again every ${WATCH_MS / 1000} s`);
    watching = setTimeout(() => { if (state.run === name) selectRun(name).catch((err) => showError(err.message)); }, WATCH_MS);
    return;
  }
  if (state.run !== name) return;  // another run was picked meanwhile
  state.info = info;
  $("run-family").textContent = info.family;
  for (const [action, id] of Object.entries(VIEWS)) $(id).hidden = !info.actions.includes(action);
  renderRunPanel(info);
  await hooks.select(info);
  watchTraining(info);
  setStatus("");
  await loadEmbeddings();
  document.body.dataset.ready = "1";
}

// a run that is still training: its curves and snapshots are fetched again every few seconds, with where
// it stands (step, elapsed time, budget left), until it finishes or another run is picked
function watchTraining(info) {
  clearTimeout(watching);
  showTraining(info.training);
  if (!info.training) return;
  const name = state.run;
  watching = setTimeout(async () => {
    if (state.run !== name) return;
    const fresh = await api(runPath(name)).catch(() => null);
    if (!fresh || state.run !== name) return;
    state.info = fresh;
    renderRunPanel(fresh);
    await hooks.refresh(fresh);
    watchTraining(fresh);
  }, WATCH_MS);
}

function showTraining(training) {
  const box = $("run-training");
  box.hidden = !training;
  if (!training) return;
  const limit = training.total_steps ? ` of ${training.total_steps.toLocaleString("en")}` : "";
  const budget = training.budget_s ? `, ${Math.max(0, training.budget_s - training.elapsed_s).toFixed(0)} s of the ${(training.budget_s / 60).toFixed(1)}-minute budget left` : "";
  box.textContent = `still training: step ${training.step.toLocaleString("en")}${limit} at the last evaluation, ${training.elapsed_s.toFixed(0)} s in${budget}; the curves and the timeline update as it writes them`;
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
