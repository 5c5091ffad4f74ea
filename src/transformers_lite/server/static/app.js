// transformers-lite inspector: plain JavaScript, no build step, nothing loaded from the network.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { run: null, info: null, tokens: [], classify: null, translate: null };

// ------------------------------------------------------------------ helpers
async function api(path, body) {
  const options = body === undefined ? {} :
    { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const response = await fetch(path, options);
  const data = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

function runPath(name, suffix = "") {
  return `/api/runs/${name.split("/").map(encodeURIComponent).join("/")}${suffix}`;
}

function showError(message) {
  const box = $("errors");
  box.textContent = message;
  box.hidden = !message;
}

function setStatus(text) { $("status").textContent = text; }

function notices(id, list) {
  const box = $(id);
  box.replaceChildren(...(list || []).map((text) => el("p", { className: "notice" }, text)));
}

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  for (const child of children) node.append(child);
  return node;
}

function svgEl(tag, attrs = {}) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

// white -> blue, by value in [0, max]; the square root lets small weights show beside one large weight
function heat(value, max) {
  const t = max > 0 ? Math.sqrt(Math.min(1, Math.max(0, value / max))) : 0;
  const c = (a, b) => Math.round(a + (b - a) * t);
  return `rgb(${c(255, 22)}, ${c(255, 78)}, ${c(255, 150)})`;
}

function visible(text) {
  return text.replace(/\n/g, "\u21b5").replace(/ /g, "\u2423") || "\u2205";
}

function fillSelect(select, count, label) {
  select.replaceChildren(...Array.from({ length: count }, (_, i) => el("option", { value: i }, `${label} ${i}`)));
}

function bars(container, entries, chosen, show = visible) {
  const max = Math.max(...entries.map(([, p]) => p), 1e-9);
  container.replaceChildren();
  for (const [label, p] of entries) {
    const row = label === chosen ? "bar-row-chosen" : "";
    const fill = el("div", { className: "bar-fill" });
    fill.style.width = `${(100 * p) / max}%`;
    container.append(
      el("span", { className: `bar-label ${row}` }, show(label)),
      el("div", { className: `bar-track ${row}` }, fill),
      el("span", { className: "bar-value", title: String(p) }, p >= 0.001 || p === 0 ? p.toFixed(3) : p.toPrecision(2)),
    );
  }
}

function heatmap(matrix, rowLabels, colLabels, title) {
  const n = matrix.length, m = matrix[0] ? matrix[0].length : 0;
  const cell = Math.max(3, Math.min(12, Math.floor(240 / Math.max(n, m, 1))));
  const canvas = el("canvas", { className: "heatmap", width: m * cell, height: n * cell });
  const ctx = canvas.getContext("2d");
  const max = Math.max(...matrix.flat(), 1e-9);
  matrix.forEach((row, i) => row.forEach((v, j) => {
    ctx.fillStyle = heat(v, max);
    ctx.fillRect(j * cell, i * cell, cell, cell);
  }));
  canvas.addEventListener("mousemove", (event) => {
    const i = Math.floor(event.offsetY / cell), j = Math.floor(event.offsetX / cell);
    if (i < n && j < m) canvas.title = `${visible(rowLabels[i])} \u2192 ${visible(colLabels[j])}: ${matrix[i][j].toFixed(3)}`;
  });
  return el("figure", {}, canvas, el("figcaption", {}, title));
}

// ------------------------------------------------------------------ runs
async function loadRuns() {
  const { runs } = await api("/api/runs");
  state.runs = runs;
  const picker = $("run-picker");
  picker.replaceChildren(...runs.map((r) => el("option", { value: r.name }, `${r.name} (${r.family})`)));
  picker.disabled = runs.length < 2;
  picker.addEventListener("change", () => selectRun(picker.value).catch((e) => showError(e.message)));
  if (runs.length) await selectRun(runs[0].name);
}

async function selectRun(name) {
  showError("");
  setStatus("loading the run\u2026");
  const info = await api(runPath(name));
  state.run = name;
  state.info = info;
  $("run-family").textContent = info.family;
  const views = { generate: "view-generator", classify: "view-classifier", translate: "view-seq2seq" };
  for (const [action, id] of Object.entries(views)) $(id).hidden = !info.actions.includes(action);
  // the run's own validation data as the example input (a model of code is offered code, not Shakespeare)
  $("prompt").value = info.example.prompt;
  $("review").value = $("source").value = info.example.text;
  $("gen-output").replaceChildren();
  $("gen-inspect").hidden = $("cls-result").hidden = $("mt-result").hidden = true;
  renderRunPanel(info);
  setupTrace(info);
  await loadTimeline();
  watchTraining(info);
  setStatus("");
  await loadEmbeddings();
  document.body.dataset.ready = "1";
}

// a run that is still training: its curves and snapshots are fetched again every few seconds, with where
// it stands (step, elapsed time, budget left), until it finishes or another run is picked
const WATCH_MS = 5000;
let watching = null;

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
    const slider = $("timeline-slider");
    const atEnd = Number(slider.value) === Number(slider.max);
    await loadTimeline();
    if (!atEnd) slider.value = Math.min(Number(slider.value), Number(slider.max));
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
  const charts = [losses, ...others.map((o) => [o])].filter((group) => group.length).map(lineChart);
  const notes = (info.notices || []).map((text) => el("p", { className: "notice" }, text)); // e.g. a damaged metrics.csv
  $("curves").replaceChildren(...notes, ...(charts.length ? charts : [el("p", { className: "muted" }, "no training history recorded")]));
}

const COLORS = ["#2f6fb3", "#e08a00", "#2e9d5b", "#b03a8e", "#6b7785"];

// about n round tick values covering [lo, hi]: steps of 1, 2 or 5 times a power of ten
function niceTicks(lo, hi, n = 5) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / n, power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((v) => v >= raw);
  const ticks = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

function tickText(v) {
  return Math.abs(v) >= 1000 ? v.toLocaleString("en") : String(Number(v.toPrecision(4)));
}

function lineChart(series) {
  const w = 440, h = 240, left = 50, bottom = 36, top = 10, right = 12;
  const svg = svgEl("svg", { width: w, height: h, class: "chart" });
  const xs = series.flatMap(([, s]) => s.step), ys = series.flatMap(([, s]) => s.value);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)], [y0, y1] = [Math.min(...ys), Math.max(...ys)];
  const sx = (x) => left + ((x - x0) / (x1 - x0 || 1)) * (w - left - right);
  const sy = (y) => h - bottom - ((y - y0) / (y1 - y0 || 1)) * (h - bottom - top);
  svg.append(svgEl("line", { x1: left, y1: h - bottom, x2: w - right, y2: h - bottom, class: "axis" }));
  svg.append(svgEl("line", { x1: left, y1: top, x2: left, y2: h - bottom, class: "axis" }));
  for (const v of niceTicks(y0, y1)) {
    svg.append(svgEl("line", { x1: left - 4, y1: sy(v), x2: w - right, y2: sy(v), class: "grid" }));
    const t = svgEl("text", { x: left - 6, y: sy(v) + 4, "text-anchor": "end" }); t.textContent = tickText(v); svg.append(t);
  }
  for (const v of niceTicks(x0, x1)) {
    svg.append(svgEl("line", { x1: sx(v), y1: h - bottom, x2: sx(v), y2: h - bottom + 4, class: "axis" }));
    const t = svgEl("text", { x: sx(v), y: h - bottom + 16, "text-anchor": "middle" }); t.textContent = tickText(v); svg.append(t);
  }
  const xl = svgEl("text", { x: (left + w - right) / 2, y: h - 4, "text-anchor": "middle" }); xl.textContent = "optimizer step"; svg.append(xl);
  series.forEach(([name, s], k) => {
    const color = COLORS[k % COLORS.length];
    const points = s.step.map((x, i) => `${sx(x).toFixed(1)},${sy(s.value[i]).toFixed(1)}`).join(" ");
    svg.append(svgEl("polyline", { points, fill: "none", stroke: color, "stroke-width": 1.5 }));
    if (s.step.length === 1) svg.append(svgEl("circle", { cx: sx(s.step[0]), cy: sy(s.value[0]), r: 3, fill: color }));
    // the legend: a swatch and the name in the series' colour (an inline style, which the page's text colour cannot override)
    const y = top + 10 + 15 * k;
    svg.append(svgEl("line", { x1: w - 150, y1: y - 4, x2: w - 134, y2: y - 4, stroke: color, "stroke-width": 3 }));
    const label = svgEl("text", { x: w - 130, y, style: `fill: ${color}`, class: "legend" });
    label.textContent = name; svg.append(label);
  });
  return svg;
}

async function loadEmbeddings() {
  const method = $("emb-method").value;
  const data = await api(runPath(state.run, `/embeddings?method=${method}`));
  $("emb-notices").textContent = data.notices.join("; ");
  const w = 640, h = 420, pad = 20;
  const xs = data.points.map((p) => p[0]), ys = data.points.map((p) => p[1]);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const sx = (x) => pad + ((x - x0) / (x1 - x0 || 1)) * (w - 2 * pad);
  const sy = (y) => h - pad - ((y - y0) / (y1 - y0 || 1)) * (h - 2 * pad);
  const svg = svgEl("svg", { width: w, height: h, class: "scatter" });
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

// ------------------------------------------------------------------ generator
function addToken(text, kind, unknown = false) {
  const index = state.tokens.length;
  state.tokens.push(text);
  const span = el("span", { className: `tok ${kind}${unknown ? " unknown" : ""}` }, text);
  span.dataset.index = index;
  span.addEventListener("click", () => explain(index).catch((e) => showError(e.message)));
  $("gen-output").append(span);
}

function numberOrNull(id) {
  const v = $(id).value.trim();
  return v === "" ? null : Number(v);
}

async function generate() {
  showError("");
  const button = $("generate");
  button.disabled = true;
  $("gen-output").replaceChildren();
  $("gen-inspect").hidden = true;
  notices("gen-notices", []);
  state.tokens = [];
  const body = {
    prompt: $("prompt").value, max_new_tokens: Number($("max-new-tokens").value),
    temperature: Number($("temperature").value), top_k: numberOrNull("top-k"), top_p: numberOrNull("top-p"),
    seed: Number($("seed").value),
  };
  // the bars of a generated token show what this sampling drew from
  state.sampling = { temperature: body.temperature, top_k: body.top_k, top_p: body.top_p };
  try {
    const response = await fetch(runPath(state.run, "/generate"), {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    if (!response.ok) {
      const data = await response.json().catch(() => ({}));
      throw new Error(data.error || `HTTP ${response.status}`);
    }
    const shown = [];
    setStatus("generating\u2026");
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const event = /^event: (.*)$/m.exec(block)[1];
        const data = JSON.parse(/^data: (.*)$/m.exec(block)[1]);
        if (event === "token") addToken(data.text, "gen");
        else if (event === "prompt") {
          for (const ch of Array.from(data.text)) addToken(ch, "prompt", data.unknown.includes(ch));
        }
        else if (event === "notice") { shown.push(data.message); notices("gen-notices", shown); }
        else if (event === "error") throw new Error(data.error);
        else if (event === "done") setStatus(`${data.tokens} tokens generated`);
      }
    }
  } finally {
    button.disabled = false;
  }
}

async function explain(index) {
  if (index === 0) {
    notices("gen-inspect-notices", ["the first character has no text before it to predict from"]);
    return;
  }
  document.querySelectorAll(".tok.selected").forEach((s) => s.classList.remove("selected"));
  document.querySelector(`.tok[data-index="${index}"]`).classList.add("selected");
  const context = state.tokens.slice(0, index).join("");
  const data = await api(runPath(state.run, "/next-token"), { context, ...(state.sampling || {}) });
  $("gen-inspect").hidden = false;
  $("gen-at").textContent = `after \u201c${visible(context.slice(-20))}\u201d (the model then wrote \u201c${visible(state.tokens[index])}\u201d); the probabilities sampling drew from (${data.sampling})`;
  bars($("next-token"), data.top.map((t) => [t.token, t.p]), state.tokens[index]);
  notices("gen-inspect-notices", data.notices);
  const grid = $("attention-grid");
  grid.replaceChildren();
  $("focus").hidden = true;
  data.attention.forEach((block, b) => block.forEach((matrix, h) => {
    const figure = heatmap(matrix, data.tokens, data.tokens, `block ${b}, head ${h}`);
    const canvas = figure.querySelector("canvas");
    canvas.dataset.block = b;
    canvas.dataset.head = h;
    canvas.addEventListener("click", () => focusHead(data, b, h));
    grid.append(figure);
  }));
}

function focusHead(data, b, h) {
  $("focus-title").textContent = `block ${b}, head ${h}`;
  matrixTable($("attention-focus"), data.attention[b][h], data.tokens, data.tokens);
  $("focus").hidden = false;
}

// ------------------------------------------------------------------ classifier
async function classify() {
  showError("");
  const data = await api(runPath(state.run, "/classify"), { text: $("review").value });
  state.classify = data;
  $("cls-result").hidden = false;
  $("prediction").textContent = data.prediction;
  bars($("class-probs"), Object.entries(data.probabilities), data.prediction);
  notices("cls-notices", data.notices);
  fillSelect($("cls-block"), data.received.length, "block");
  fillSelect($("cls-head"), data.received[0].length, "head");
  shadeWords();
}

function shadeWords() {
  const data = state.classify;
  const values = data.received[Number($("cls-block").value)][Number($("cls-head").value)];
  const max = Math.max(...values, 1e-9);
  $("review-words").replaceChildren(...data.words.map((word, i) => {
    const span = el("span", { className: "word", title: `attention received: ${values[i].toFixed(3)}` }, word);
    span.style.background = heat(values[i], max);
    span.style.color = values[i] / max > 0.6 ? "#fff" : "";
    return span;
  }));
}

// ------------------------------------------------------------------ translator
async function translate() {
  showError("");
  const button = $("translate");
  button.disabled = true;
  try {
    const data = await api(runPath(state.run, "/translate"), { text: $("source").value, beam: Number($("beam").value) });
    state.translate = data;
    $("mt-result").hidden = false;
    $("translation").textContent = data.translation;
    notices("mt-notices", data.notices);
    fillSelect($("mt-block"), data.attention.length, "block");
    fillSelect($("mt-head"), data.attention[0].length, "head");
    drawAlignment();
  } finally {
    button.disabled = false;
  }
}

function matrixTable(table, matrix, rowLabels, colLabels) {
  const max = Math.max(...matrix.flat(), 1e-9);
  const head = el("tr", {}, el("th"), ...colLabels.map((t) => el("th", {}, visible(t))));
  const rows = matrix.map((row, i) => el("tr", {}, el("th", {}, visible(rowLabels[i] ?? "")),
    ...row.map((v, j) => {
      const td = el("td", { title: `${visible(rowLabels[i] ?? "")} \u2192 ${visible(colLabels[j])}: ${v.toFixed(3)}` });
      td.style.background = heat(v, max);
      return td;
    })));
  table.replaceChildren(el("thead", {}, head), el("tbody", {}, ...rows));
}

function drawAlignment() {
  const data = state.translate;
  const matrix = data.attention[Number($("mt-block").value)][Number($("mt-head").value)];
  matrixTable($("alignment"), matrix, data.target_tokens, data.source_tokens);
}

// ------------------------------------------------------------------ wiring
function guard(fn) {
  return () => fn().catch((e) => { showError(e.message); setStatus(""); });
}

$("generate").addEventListener("click", guard(generate));
$("classify").addEventListener("click", guard(classify));
$("translate").addEventListener("click", guard(translate));
$("cls-block").addEventListener("change", shadeWords);
$("cls-head").addEventListener("change", shadeWords);
$("mt-block").addEventListener("change", drawAlignment);
$("mt-head").addEventListener("change", drawAlignment);
$("emb-method").addEventListener("change", guard(loadEmbeddings));
loadRuns().catch((e) => showError(e.message));
