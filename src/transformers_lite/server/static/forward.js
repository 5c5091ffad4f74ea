// The forward pass, step by step: one forward of the run's model over the user's input, every named step
// with its equation, shape and values (POST /api/runs/NAME/trace), heads switched off through the same
// forward, and the heads ranked by what switching each off costs (POST /api/runs/NAME/sweep).
"use strict";

const trace = { data: null, plain: null, step: 0, pos: 0, block: "", off: new Set() };
function setupTrace(info) {
  $("view-forward").hidden = false;
  $("trace-text").value = info.example.text;  // from the run's validation data (views.run_info)
  const can = (action) => info.actions.includes(action);  // what the family's runs do (families.py)
  $("trace-target-row").hidden = !can("classify") && !can("translate");
  $("trace-target").placeholder = can("classify") ? "Backward: the class (default: its prediction)" : "default: the model's translation";
  $("trace-target").value = "";
  $("backward-result").hidden = true;
  $("sweep-windows").parentElement.hidden = $("backward-position").parentElement.hidden = !can("generate");
  $("trace-head").replaceChildren();  // another run's heads do not carry over
  $("trace-result").hidden = $("sweep-result").hidden = true;
  Object.assign(trace, { data: null, plain: null, step: 0, pos: 0, block: "", off: new Set() });
}

// red for positive, blue for negative, white at zero; the square root lets small values show
function signedRGB(value, max) {
  const t = max > 0 ? Math.sqrt(Math.min(1, Math.abs(value) / max)) : 0;
  const c = (a, b) => Math.round(a + (b - a) * t);
  return value >= 0 ? [c(255, 178), c(255, 24), c(255, 43)] : [c(255, 33), c(255, 102), c(255, 172)];
}

function signedHeat(value, max) {
  return `rgb(${signedRGB(value, max).join(", ")})`;
}

function absMax(values) {  // a loop, not Math.max(...values): a (T, F) step can hold more values than a call takes
  let max = 1e-9;
  for (const v of values) if (v !== null) max = Math.max(max, Math.abs(v));  // null: −∞ (masked)
  return max;
}

const MASKED_RGB = [205, 205, 205];  // a −∞ (masked) entry: JSON's null
function shown(x) { return x === null ? "\u2212\u221e (masked)" : Number.isInteger(x) ? String(x) : Number(x).toFixed(4); }

function traceBody() {
  const body = { text: $("trace-text").value, block: trace.block, switch_off: [...trace.off] };
  const can = (action) => state.info.actions.includes(action);
  if (can("translate") && $("trace-target").value.trim()) body.target = $("trace-target").value;
  if (!can("classify")) body.position = trace.pos;
  return body;
}

async function runTrace(fresh) {
  if (fresh) Object.assign(trace, { block: "", off: new Set(), plain: null, step: 0, pos: 0 });
  setStatus("tracing\u2026");
  let data = await api(runPath(state.run, "/trace"), traceBody());
  if (!trace.block && data.blocks.length) {  // the first answer names the blocks: fetch the first one's steps
    trace.block = data.blocks[0];
    trace.pos = data.tokens.length - 1;
    data = await api(runPath(state.run, "/trace"), traceBody());
  }
  if (!trace.off.size) trace.plain = data;
  trace.data = data;
  trace.step = Math.min(trace.step, data.steps.length - 1);
  setStatus("");
  notices("trace-notices", data.notices);
  $("trace-result").hidden = false;
  renderTrace();
}

function renderTrace() {
  const data = trace.data;
  const block = $("trace-block");
  block.replaceChildren(...data.blocks.map((b) => el("option", { value: b }, b)));
  block.value = trace.block;
  const heads = headsOf(data);
  if ($("trace-head").options.length !== heads) fillSelect($("trace-head"), heads, "head");
  renderSwitches(heads);
  $("trace-tokens").replaceChildren(...data.tokens.map((t, i) => {
    const chip = el("span", { className: `chip${i === trace.pos ? " selected" : ""}` }, visible(t));
    chip.addEventListener("click", guard(async () => { trace.pos = i; await runTrace(false); }));
    return chip;
  }));
  $("trace-steps").replaceChildren(...data.steps.map((s, i) => {
    const chip = el("span", { className: `step${i === trace.step ? " current" : ""}` }, shortName(s.name));
    chip.addEventListener("click", () => { trace.step = i; renderTrace(); });
    return chip;
  }));
  renderStep(data.steps[trace.step]);
  renderStrips(data);
  renderOutput(data);
  renderLens(data);
  renderDistance(data);
}

function headsOf(data) {  // the head axis of the queries' projection
  const q = data.steps.find((s) => s.kind === "projection" && s.axes.startsWith("(H"));
  return q ? q.shape[0] : 1;
}

function shortName(name) {
  return trace.block && name.startsWith(trace.block + ".") ? name.slice(trace.block.length + 1) : name;
}

function renderSwitches(heads) {
  const box = $("trace-switches");
  const scopes = [...new Set(trace.data.steps.filter((s) => s.kind === "weighted_sum").map((s) => s.scope))];
  const boxes = [];
  for (const scope of scopes) {
    for (let h = 0; h < heads; h++) {
      const spec = `${scope}.head.${h}`;
      const label = `${shortName(scope)} head ${h}`;
      const input = el("input", { type: "checkbox", checked: trace.off.has(spec), value: spec });
      input.addEventListener("change", guard(async () => {
        if (input.checked) trace.off.add(spec); else trace.off.delete(spec);
        await runTrace(false);
      }));
      boxes.push(el("label", {}, input, ` off: ${label}`));
    }
  }
  box.replaceChildren(el("span", { className: "muted" }, `switch off in ${trace.block || "the model"}: `), ...boxes);
}

// a step's values as a 2-D matrix for the chosen head: (H, T, X) -> (T, X); (T,) -> one row
function matrixOf(step, head) {
  let v = step.values;
  if (v === undefined) return null;
  if (!Array.isArray(v)) return [[v]];
  if (!Array.isArray(v[0])) return [v];
  while (Array.isArray(v[0][0])) v = v[Math.min(head, v.length - 1)];
  return v;
}

function renderStep(step) {
  const head = Number($("trace-head").value || 0);
  $("trace-step-name").textContent = `${trace.step + 1} / ${trace.data.steps.length}: ${step.name}`;
  const row = (k, v) => el("tr", {}, el("th", {}, k), el("td", {}, v));
  const from = (step.reads || []).map((name) => {  // the steps it was computed from: click one to go there
    const i = trace.data.steps.findIndex((s) => s.name === name);
    const chip = el("span", { className: i < 0 ? "step muted" : "step" }, shortName(name));
    if (i >= 0) chip.addEventListener("click", () => { trace.step = i; renderTrace(); });
    return chip;
  });
  const params = (step.parameters || []).join(", ");
  $("trace-step-info").replaceChildren(
    row("equation (here, row-major)", step.equation),
    row("the posts (column-major)", step.post_equation),
    row("shape", `${step.axes} = (${step.shape.join(", ")})`),
    row("the posts' shape", step.post_axes),
    row("what it is", `${step.meaning} (kind: ${step.kind})`),
    row("computed from", from.length || params ? el("span", {}, el("span", { className: "steps inline" }, ...from), params ? ` parameters: ${params}` : "") : "the input"),
  );
  const view = $("trace-view");
  const axes = step.axes.slice(1, -1).split(", ");  // one letter per axis: T the tokens, S the source's
  const perHead = step.values && step.shape.length === 3 && axes[0] === "H";
  const inEncoder = trace.data.source_tokens.length && step.name.startsWith("encoder.");  // a translator's encoder
  const labels = (letter) => letter === "S" || (letter === "T" && inEncoder) ? trace.data.source_tokens : letter === "T" ? trace.data.tokens : null;
  const rows = labels(axes[axes.length - 2]) || labels(axes[0]) || trace.data.tokens;
  const cols = axes.length > 1 ? labels(axes[axes.length - 1]) : null;
  const pos = Math.min(trace.pos, rows.length - 1);
  if (step.top) {  // a large vocabulary: the best entries at the chosen position
    const best = step.top[Math.min(trace.pos, step.top.length - 1)];
    view.replaceChildren(el("p", {}, `the largest entries at position ${trace.pos}: ` + best.map((e) => `${visible(e.token ?? String(e.id))} ${e.value.toFixed(4)}`).join(", ")));
    $("trace-row").replaceChildren();
    return;
  }
  const m = matrixOf(step, head);
  const figures = [signedMap(m, rows, cols, perHead ? `head ${head}` : step.name, false, pos)];
  if (perHead) {  // all heads at a glance; click one to choose it
    step.values.forEach((hv, h) => {
      if (h === head) return;
      const fig = signedMap(hv, rows, cols, `head ${h}`, true, pos);
      fig.addEventListener("click", () => { $("trace-head").value = h; renderTrace(); });
      figures.push(fig);
    });
  }
  view.replaceChildren(...figures);
  const r = m.length === rows.length ? m[pos] : m[0];
  $("trace-row").replaceChildren(el("span", { className: "muted" }, `row ${m.length === rows.length ? pos : 0}: `),
    ...r.slice(0, 64).map((x) => el("span", { className: "num" }, shown(x))),
    r.length > 64 ? el("span", { className: "muted" }, `\u2026 (${r.length} values)`) : "");
}

function signedMap(matrix, rowLabels, colLabels, title, small, pos) {
  const n = matrix.length, m = matrix[0].length;
  const cell = small ? Math.max(2, Math.min(6, Math.floor(120 / Math.max(n, m)))) : Math.max(2, Math.min(14, Math.floor(480 / Math.max(n, m))));
  const canvas = el("canvas", { className: small ? "heatmap small" : "heatmap", width: m * cell, height: n * cell });
  const ctx = canvas.getContext("2d");
  const max = absMax(matrix.flat());
  const pixels = new ImageData(m, n);  // one pixel per value, then scaled up: a 256 x 256 map draws at once
  matrix.forEach((row, i) => row.forEach((v, j) => {
    const k = 4 * (i * m + j), [r, g, b] = v === null ? MASKED_RGB : signedRGB(v, max);
    pixels.data[k] = r; pixels.data[k + 1] = g; pixels.data[k + 2] = b; pixels.data[k + 3] = 255;
  }));
  const values = el("canvas", { width: m, height: n });
  values.getContext("2d").putImageData(pixels, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(values, 0, 0, m * cell, n * cell);
  if (!small && n === rowLabels.length) {  // the followed position
    ctx.strokeStyle = "#e08a00";
    ctx.strokeRect(0.5, pos * cell + 0.5, m * cell - 1, cell - 1);
  }
  canvas.addEventListener("mousemove", (event) => {
    const i = Math.floor(event.offsetY / cell), j = Math.floor(event.offsetX / cell);
    if (i >= n || j >= m) return;
    const r = n === rowLabels.length ? visible(rowLabels[i]) : `row ${i}`;
    const c = colLabels ? visible(colLabels[j] ?? String(j)) : `channel ${j}`;
    const v = matrix[i][j];
    canvas.title = `${r}, ${c}: ${v === null ? shown(v) : Number(v).toPrecision(5)}`;
  });
  return el("figure", {}, canvas, el("figcaption", {}, title));
}

function renderStrips(data) {
  const onSource = data.source_tokens.length && trace.block.startsWith("encoder.");  // a translator's encoder
  const rows = onSource ? data.source_tokens : data.tokens;
  const pos = Math.min(trace.pos, rows.length - 1);
  $("trace-pos").textContent = `${onSource ? "(of the source) " : ""}${pos} (${visible(rows[pos] ?? "")})`;
  const strips = [];
  for (const step of data.steps) {
    if (!step.values || step.shape.length !== 2 || !/\(T, C\)$/.test(step.axes) || step.shape[0] !== rows.length) continue;
    if (data.source_tokens.length && step.name.startsWith("encoder.") !== Boolean(onSource)) continue;
    const v = step.values[pos];
    const canvas = el("canvas", { width: v.length, height: 1 });
    const ctx = canvas.getContext("2d");
    const max = absMax(v);
    v.forEach((x, j) => { ctx.fillStyle = signedHeat(x, max); ctx.fillRect(j, 0, 1, 1); });
    strips.push(el("span", {}, shortName(step.name)), canvas);
  }
  $("trace-strips").replaceChildren(...strips);
}

function outputEntries(data) {
  const probs = data.steps.find((s) => s.name === "probabilities");
  if (data.classes.length) return data.classes.map((c, i) => [c, probs.values[i]]);
  if (probs.top) return probs.top[Math.min(trace.pos, probs.top.length - 1)].map((e) => [e.token ?? String(e.id), e.value]);
  const row = probs.values[Math.min(trace.pos, probs.values.length - 1)];
  const vocab = data.vocabulary || [];
  return row.map((p, i) => [vocab[i] ?? String(i), p]).sort((a, b) => b[1] - a[1]).slice(0, 10);
}

function renderOutput(data) {
  const entries = outputEntries(data);
  bars($("trace-output"), entries, null, data.classes.length ? (label) => label : visible);
  const off = data.switched_off;
  let change = "";
  if (off && off.largest_at !== undefined) {  // per position: the one followed, and where it moved most
    change = `switched off: ${off.steps.join(", ")}; at position ${trace.pos} a probability moved by at most ${off.change_at_position.toFixed(4)}; ` +
      `at any position by ${off.largest_probability_change.toFixed(4)} (position ${off.largest_at}, after ${visible(off.largest_at_token)})`;
  } else if (off) {
    change = `switched off: ${off.steps.join(", ")}; largest change of a probability ${off.largest_probability_change.toFixed(4)}`;
  }
  $("trace-change").textContent = change || (data.classes.length ? "(class probabilities)" : `(after position ${trace.pos})`);
}

function renderLens(data) {
  const show = data.classes.length ? (label) => label : visible;
  const rows = data.lens.map((r) => el("tr", {}, el("th", {}, r.at),
    ...r.top.map((t) => el("td", {}, `${show(t.token)} ${t.p.toFixed(3)}`))));
  $("trace-lens").replaceChildren(...rows);
}

function renderDistance(data) {
  const rows = Object.entries(data.attention_distance).map(([name, heads]) =>
    el("tr", {}, el("th", {}, name), ...heads.map((d) => el("td", { className: "num" }, d.toFixed(2)))));
  $("trace-distance").replaceChildren(...rows);
}

async function sweep() {
  const body = traceBody();
  setStatus("switching each head off in turn\u2026");
  const windows = state.info.actions.includes("generate") ? Number($("sweep-windows").value || 0) : 0;
  const data = await api(runPath(state.run, "/sweep"), { text: body.text, target: body.target, windows });
  setStatus("");
  const where = data.windows ? `, averaged over ${data.windows} windows of the validation text` : " on this input";
  $("sweep-loss").textContent = `(loss with every head: ${data.loss.toFixed(4)}${where})`;
  const head = el("tr", {}, el("th", {}, "head switched off"), el("th", {}, "loss"), el("th", {}, "rise"));
  $("sweep-table").replaceChildren(el("thead", {}, head), el("tbody", {}, ...data.heads.map((h) =>
    el("tr", {}, el("td", {}, h.head), el("td", { className: "num" }, h.loss.toFixed(4)), el("td", { className: "num" }, h.rise.toFixed(4))))));
  $("sweep-result").hidden = false;
}

$("trace").addEventListener("click", guard(() => runTrace(true)));
$("sweep").addEventListener("click", guard(sweep));
$("trace-block").addEventListener("change", guard(async () => { trace.block = $("trace-block").value; trace.step = 0; await runTrace(false); }));
$("trace-head").addEventListener("change", () => renderTrace());
$("trace-prev").addEventListener("click", () => { trace.step = Math.max(0, trace.step - 1); renderTrace(); });
$("trace-next").addEventListener("click", () => { trace.step = Math.min(trace.data.steps.length - 1, trace.step + 1); renderTrace(); });
