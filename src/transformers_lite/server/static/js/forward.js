// The forward pass, step by step: one forward of the run's model over the user's input
// (POST /api/runs/NAME/trace): the map of the whole model, every step with its equation, shape and
// values on labelled maps with legends, a walk from the token ids to the probabilities one step at a
// time (a sentence per step, its box lit on the map, the rows it combined), heads switched off through
// the same forward (their ranking: readouts.js). In the walk a question comes before each step's map
// (quiz.js), a step's exercise under it (practice.js), and the same step of a second forward beside
// it (beside.js: another run, or a head off).
import { drawDiagram, mapNote, visibleOutline } from "./diagram.js";
import { askedCells, asking, questionOf, quiz, renderQuestion, scoreText, setQuizOn, startQuiz } from "./quiz.js";
import { offerExercise, resetPractice, walkLit } from "./practice.js";
import { beside, besideChoices, refreshBeside, renderBeside } from "./beside.js";
import { renderDistance, renderLens, renderOutput, renderStrips, sweep } from "./readouts.js";
import { $, api, el, guard, notices, runPath, setStatus, showError, state, visible } from "./dom.js";
import { absMax, heatmap, legend, maskScale, number, probabilityScale, signedScale, strip, turnedRows } from "./scales.js";
import { axesOf, columnsOf, headsOf, matrixOf, scaleOf } from "./matrices.js";

export const trace = { data: null, step: 0, pos: 0, src: 0, block: "", off: new Set() };  // pos: a target position, src: a source one
const can = (action) => state.info.actions.includes(action);  // what the family's runs do (families.py)

export async function setupTrace(info) {
  $("view-forward").hidden = false;
  $("trace-text").value = info.example.text;  // from the run's validation data (panel.run_info)
  $("trace-target-row").hidden = !can("classify") && !can("translate");
  $("trace-target").placeholder = can("classify") ? "Backward: the class (default: its prediction)" : "default: the model's translation";
  $("trace-target").value = "";
  $("backward-result").hidden = true;
  $("sweep-windows").parentElement.hidden = $("backward-position").parentElement.hidden = !can("generate");
  $("trace-head").replaceChildren();  // another run's heads do not carry over
  $("trace-result").hidden = $("sweep-result").hidden = true;
  $("guide-start").disabled = true;
  Object.assign(trace, { data: null, step: 0, pos: 0, src: 0, block: "", off: new Set() });
  quiz.walking = false;
  resetPractice();
  await runTrace(true).catch((e) => showError(e.message));  // the way in: this model's map, before anything is typed
}

// `typed`: the text and target read once per trace, so its two requests trace the same text even when the
// box changes in between
function traceBody(typed = { text: $("trace-text").value, target: $("trace-target").value }) {
  const body = { text: typed.text, block: trace.block, switch_off: [...trace.off], seed: quiz.seed };
  if (can("translate") && typed.target.trim()) body.target = typed.target;
  if (!can("classify")) body.position = trace.pos;
  return body;
}

export async function runTrace(fresh) {
  if (fresh) Object.assign(trace, { block: "", off: new Set(), step: 0, pos: 0, src: 0 });
  const run = state.run;
  setStatus("tracing\u2026");
  const typed = { text: $("trace-text").value, target: $("trace-target").value };
  let data = await api(runPath(run, "/trace"), traceBody(typed));
  if (!trace.block && data.blocks.length) {  // the first answer names the blocks: fetch the first one's steps
    trace.block = data.blocks[0];
    trace.pos = data.tokens.length - 1;
    trace.src = Math.max(0, data.source_tokens.length - 1);
    data = await api(runPath(run, "/trace"), traceBody(typed));
  }
  if (state.run !== run) return;
  trace.body = traceBody(typed);
  await refreshBeside(trace.body);  // the walk beside another run, or with a head off: the same input
  if (state.run !== run) return;
  trace.data = data;
  startQuiz([run, typed.text, typed.target, quiz.seed, [...trace.off].sort()].join("\u0000"));  // another: a new score
  trace.step = Math.min(trace.step, data.steps.length - 1);
  setStatus("");
  notices("trace-notices", data.notices);
  $("trace-result").hidden = false;
  $("guide-start").disabled = false;
  renderTrace();
}

// ------------------------------------------------------------------ walking the steps
function memberOf(block) { const entry = trace.data.outline.find((s) => block && s.block === block); return entry ? entry.member : ""; }

function member() {  // the ensemble member on view: the chosen block's, else the first ("" for one model)
  return memberOf(trace.block) || (trace.data.outline.find((s) => s.member) || { member: "" }).member;
}

function walk() { return visibleOutline(trace.data.outline, member()); }  // every step in forward order

export async function goTo(name) {
  const entry = trace.data.outline.find((s) => s.name === name);
  if (entry && entry.block && entry.block !== trace.block) {
    trace.block = entry.block;
    await runTrace(false);
  }
  trace.step = Math.max(0, trace.data.steps.findIndex((s) => s.name === name));
  renderTrace();
  showWalk();
}

// the walk's panel (a step's words, equation, map and legend) at the top of the window, unless it is there
function showWalk() {
  const top = $("guide").getBoundingClientRect().top;
  if (Math.abs(top) > 1) $("guide").scrollIntoView({ block: "start" });
}

async function move(by) {
  const steps = walk();
  const here = steps.findIndex((s) => s.name === trace.data.steps[trace.step].name);
  const next = steps[Math.min(steps.length - 1, Math.max(0, here + by))];
  await goTo(next.name);
}

// ------------------------------------------------------------------ drawing
export function renderTrace() {
  const data = trace.data;
  const block = $("trace-block");
  block.replaceChildren(...data.blocks.map((b) => el("option", { value: b }, b)));
  block.value = trace.block;
  const heads = headsOf(data);
  if ($("trace-head").options.length !== heads) {
    $("trace-head").replaceChildren(...Array.from({ length: heads }, (_, i) => el("option", { value: i }, `head ${i}`)));
  }
  renderSwitches(heads);
  const source = onSourceBlock();  // a translator's encoder block: its row of source tokens to follow
  const followed = source ? trace.src : trace.pos;
  $("trace-tokens").replaceChildren(...(source ? data.source_tokens : data.tokens).map((t, i) => {
    const chip = el("span", { className: `chip${i === followed ? " selected" : ""}` }, visible(t));
    chip.addEventListener("click", guard(async () => {
      if (source) { trace.src = i; renderTrace(); } else { trace.pos = i; await runTrace(false); }
    }));
    return chip;
  }));
  $("trace-steps").replaceChildren(...data.steps.map((s, i) => {
    const chip = el("span", { className: `step${i === trace.step ? " current" : ""}` }, shortName(s.name));
    chip.addEventListener("click", () => { trace.step = i; renderTrace(); });
    return chip;
  }));
  const step = data.steps[trace.step];
  $("model-map").replaceChildren(...drawDiagram(data.outline, member(), step.name, guard(goTo)));
  $("model-map-note").textContent = mapNote(data.outline, member());
  renderStep(step);
  renderGuide(step);
  renderStrips(data, source, followed, shortName);
  renderOutput(data, trace.pos);
  renderLens(data);
  renderDistance(data);
}

// a translator's encoder is its source side: each step says its side (the trace JSON's "side")
function onSourceBlock() { return trace.data.outline.some((s) => s.block === trace.block && s.side === "source"); }

function onSource(step) { return step.side === "source"; }

function shortName(name) {  // a step (or a layer, by its scope) of the chosen block by its name within the block
  const entry = trace.data.outline.find((s) => s.name === name || s.scope === name);
  return entry && entry.block && entry.block === trace.block ? name.slice(entry.block.length + 1) : name;
}

function renderSwitches(heads) {
  const scopes = [...new Set(trace.data.steps.filter((s) => s.role === "heads").map((s) => s.scope))];  // each attention layer
  besideChoices($("beside-pick"), scopes, heads, state.info.comparable || []);
  const boxes = [];
  for (const scope of scopes) {
    for (let h = 0; h < heads; h++) {
      const spec = `${scope}.head.${h}`;
      const input = el("input", { type: "checkbox", checked: trace.off.has(spec), value: spec });
      input.addEventListener("change", guard(async () => {
        if (input.checked) trace.off.add(spec); else trace.off.delete(spec);
        await runTrace(false);
      }));
      boxes.push(el("label", { className: "switch" }, input, ` ${shortName(scope)} head ${h}`));
    }
  }
  $("trace-switches").replaceChildren(el("span", { className: "muted" }, `switch off in ${trace.block || "the model"}: `), ...boxes);
}

function tokensFor(letter, step) {
  const data = trace.data;
  if (letter === "S" || (letter === "T" && onSource(step))) return data.source_tokens;  // a translator's encoder
  return letter === "T" ? data.tokens : null;
}

function renderStep(step) {
  const held = asking(step, trace.data);  // the map waits for the question's answer
  for (const id of ["trace-view", "trace-row", "guide-rows"]) $(id).hidden = held;
  const head = Number($("trace-head").value || 0);
  const steps = walk();
  const at = steps.findIndex((s) => s.name === step.name);
  $("trace-step-name").textContent = `${at + 1} / ${steps.length}: ${step.name}`;
  const row = (k, v) => el("tr", {}, el("th", {}, k), el("td", {}, v));
  const from = (step.reads || []).map((name) => {  // the steps it was computed from: click one to go there
    const known = trace.data.outline.some((s) => s.name === name);
    const chip = el("span", { className: known ? "step" : "step muted" }, shortName(name));
    if (known) chip.addEventListener("click", guard(() => goTo(name)));
    return chip;
  });
  const params = (step.parameters || []).join(", ");
  $("trace-step-info").replaceChildren(
    row("equation (here, row-major)", step.equation),
    row("the posts (column-major)", step.post_equation),
    row("shape", held ? `${step.axes} (its sizes once you answer)` : `${step.axes} = (${step.shape.join(", ")})`),
    row("the posts' shape", held ? "(once you answer)" : step.post_axes),
    row("what it is", `${step.meaning} (kind: ${step.kind})`),
    row("computed from", from.length || params ? el("span", {}, el("span", { className: "steps inline" }, ...from), params ? ` parameters: ${params}` : "") : "the input"),
  );
  const view = $("trace-view");
  if (held) {  // nothing of the map is drawn before the answer
    view.replaceChildren();
    $("trace-row").replaceChildren();
    showBeside(step, held);
    return;
  }
  const axes = axesOf(step);
  const perHead = step.values && step.shape.length === 3 && axes[0] === "H";
  const rows = tokensFor(axes[axes.length - 2], step) || tokensFor(axes[0], step) || trace.data.tokens;
  const { cols, colTitle } = columnsOf(step, trace.data);
  const pos = Math.min(onSource(step) ? trace.src : trace.pos, rows.length - 1);
  if (step.top) {  // a large vocabulary: the best entries at the chosen position
    const best = step.top[Math.min(trace.pos, step.top.length - 1)];
    view.replaceChildren(el("p", {}, `the largest entries at position ${trace.pos}: ` + best.map((e) => `${visible(e.token ?? String(e.id))} ${e.value.toFixed(4)}`).join(", ")));
    $("trace-row").replaceChildren();
    showBeside(step, held, head, {});
    return;
  }
  if (step.kind === "tokens") {  // ids are names, not magnitudes: written, not coloured
    view.replaceChildren(el("p", { className: "tokens" }, ...step.values.flat().map((id, i) =>
      el("span", { className: `chip${i === pos ? " selected" : ""}` }, `${visible(rows[i] ?? "")} = ${id}`))));
    $("trace-row").replaceChildren();
    showBeside(step, held, head, {});
    return;
  }
  // grouped queries: a (G, T, D) step holds the key/value head the chosen query head reads, h // (H / G)
  const group = axes[0] === "G" ? Math.floor(head * step.shape[0] / headsOf(trace.data)) : -1;
  const m = matrixOf(step, group >= 0 ? group : head);
  const s = scaleOf(step, trace.data.steps);
  const labelled = { rows: m.length === rows.length ? rows : null, cols, s, followed: m.length === rows.length ? pos : -1,
    rowTitle: m.length === rows.length ? "position" : "row", colTitle,
    onHover: (i, j) => lightTokens(i, cols === rows ? j : -1) };  // a key lit among the chips when they are its tokens
  const q = questionOf(step, trace.data), asked = quiz.answers.has(step.name) ? askedCells(q, step) : null;
  const marked = asked && (asked.head === null || asked.head === (group >= 0 ? group : head)) ? asked.cells : null;
  const lit = walkLit.step === step.name && (walkLit.head === null || walkLit.head === head) &&
    walkLit.wrong.length === m.length && walkLit.wrong[0].length === m[0].length ? walkLit.wrong : null;
  const title = perHead ? `${shortName(step.name)}, head ${head}` :
    group >= 0 ? `${shortName(step.name)}, key/value head ${group} (read by head ${head})` : shortName(step.name);
  const figures = [heatmap(m, { ...labelled, fit: mapFit(), title, marked, lit })];
  if (perHead) {  // every head at a glance, on the same scale; click one to choose it
    const others = el("div", { className: "grid thumbs" });
    step.values.forEach((hv, h) => {
      if (h === head) return;
      const fig = heatmap(hv, { s, title: `head ${h}`, small: true });
      fig.addEventListener("click", () => { $("trace-head").value = h; renderTrace(); });
      others.append(fig);
    });
    figures.push(el("div", {}, el("p", { className: "muted" }, "the other heads, on the same scale (click one)"), others));
  }
  view.replaceChildren(...figures);
  showBeside(step, held, group >= 0 ? group : head, labelled);
  const r = m.length === rows.length ? m[pos] : m[0];
  $("trace-row").replaceChildren(el("span", { className: "muted" }, `row ${m.length === rows.length ? pos : 0}: `),
    ...r.slice(0, 64).map((x) => el("span", { className: "num" }, number(x))),
    r.length > 64 ? el("span", { className: "muted" }, `\u2026 (${r.length} values)`) : "");
}

// the walk beside another run or with a head off (beside.js), hidden while a question waits: its map would
// tell the answer
function showBeside(step, held, head, labels) {
  if (held) { $("walk-beside").hidden = true; return; }
  const values = step.kind === "tokens" ? { ...step, values: undefined } : step;  // ids: written, not compared
  renderBeside($("walk-beside"), { data: trace.data, step: values, head, pos: trace.pos, labels, fit: Math.min(300, mapFit()) });
}

// the side of a step's map: small enough that the walk's panel (its words, equation, map and legend) fits the
// window's height, a laptop's 1280x720 too; at most 480 pixels
function mapFit() { return Math.max(160, Math.min(480, window.innerHeight - 250)); }

// hovering a cell of a (T, S) map lights its query's and its key's token chips
function lightTokens(i, j) {
  const chips = $("trace-tokens").children;
  for (let k = 0; k < chips.length; k++) chips[k].classList.toggle("query", k === i);
  for (let k = 0; k < chips.length; k++) chips[k].classList.toggle("key", k === j && j !== i);
}

// the guided walk: the step in a sentence, and the rows at the followed position that it combined
function renderGuide(step) {
  const steps = walk();
  const at = steps.findIndex((s) => s.name === step.name);
  const words = onSource(step) ? trace.data.source_tokens : trace.data.tokens;
  const at0 = onSource(step) ? trace.src : trace.pos;
  const token = words[Math.min(at0, words.length - 1)];
  const reads = (step.reads || []).map(shortName);
  const sentence = `Step ${at + 1} of ${steps.length}, ${shortName(step.name)}: ${step.meaning}. ` +
    `It is ${step.computes}${reads.length ? `, computed from ${reads.join(" and ")}` : ""}` +
    `${step.parameters && step.parameters.length ? ` with ${step.parameters.join(", ")}` : ""}.`;
  $("guide-sentence").textContent = sentence;
  $("guide-where").textContent = `Following ${onSource(step) ? "source " : ""}position ${at0} (${visible(token ?? "")}); ${at + 1 < steps.length ? `next: ${shortName(steps[at + 1].name)}` : "this is the model's output"}.`;
  $("guide-rows").replaceChildren(...rowsCombined(step));
  renderQuestion($("walk-question"), step, trace.data, state.info, (q) => {
    const asked = askedCells(q, step);  // the map opens on the head asked about
    if (asked && asked.head !== null && step.shape.length === 3 && step.axes[1] === "H") $("trace-head").value = asked.head;
    renderTrace();
  });
  $("quiz-score").textContent = quiz.on ? `score: ${scoreText()}` : "";
  $("quiz-new").title = `question set ${quiz.seed}: the same run, input and set always ask the same; click for set ${quiz.seed + 1}`;
  $("quiz-on").checked = quiz.on;
  $("quiz-new").hidden = !quiz.on;
  offerExercise(step, trace.data, guard(goTo), renderTrace, asking(step, trace.data)).catch((e) => showError(e.message));
}

// The read a step combines whole, by its kind (its index in the step's reads): a row of scores is q·k_j for
// every key j, a row of the weighted sum Σ_j p_j v_j over every value row j; the other reads, and the step
// itself, are used at the followed position only.
const WHOLE = { scores: 1, weighted_sum: 1 };

// the rows at the followed position that a step combined, each a strip, above its own row; the read it
// combines whole drawn whole, one column per row j (under the row of j's scores or weights), the followed
// position's lit; probabilities on their fixed 0-1 scale, a mask on its own, every other row on one signed
// scale so sizes compare
function rowsCombined(step) {
  const head = Number($("trace-head").value || 0);
  const rowOf = (s) => {
    const m = matrixOf(s, head);
    return m && m.length > 1 ? m[Math.min(onSource(s) ? trace.src : trace.pos, m.length - 1)] : m ? m[0] : null;
  };
  const inputs = (step.reads || []).map((n) => trace.data.steps.find((s) => s.name === n));
  const whole = inputs[WHOLE[step.kind]];
  const shown = [...inputs, step].filter((s) => s && s.values && s.kind !== "tokens" && rowOf(s));
  const valuesOf = (s) => (s === whole ? matrixOf(s, head) : [rowOf(s)]);
  const isProbability = (s) => s.kind === "softmax";
  const signedSteps = shown.filter((s) => !isProbability(s) && s.kind !== "mask");
  const signed = signedScale(absMax(signedSteps.map(valuesOf)), "value (one scale for these rows)");
  const probability = probabilityScale("probability (fixed 0\u20131)");
  const mask = maskScale();
  const scaleFor = (s) => (isProbability(s) ? probability : s.kind === "mask" ? mask : signed);
  const strips = [];
  for (const st of shown) {
    const name = `${st === step ? "\u2192 " : ""}${shortName(st.name)}`;
    if (st === whole) {
      const rowAxis = axesOf(st).at(-2);  // a source's rows (cross-attention) hold no followed position
      const lit = rowAxis === "S" || onSource(st) !== onSource(step) ? -1 : Math.min(trace.pos, matrixOf(st, head).length - 1);
      strips.push(el("span", {}, name, el("br"), el("span", { className: "muted" }, "every row j, as column j")), turnedRows(matrixOf(st, head), signed, lit));
    } else {
      strips.push(el("span", {}, name), strip(rowOf(st), scaleFor(st)));
    }
  }
  const used = [...new Set(shown.map(scaleFor))];
  const masked = signedSteps.some((s) => valuesOf(s).flat().includes(null));
  for (const s of used) strips.push(el("span"), legend(s, { masked: s === signed && masked }));
  return strips;
}


$("trace").addEventListener("click", guard(() => runTrace(true)));
$("sweep").addEventListener("click", guard(() => sweep(traceBody(), can("generate") ? Number($("sweep-windows").value || 0) : 0)));
$("trace-block").addEventListener("change", guard(async () => { trace.block = $("trace-block").value; trace.step = 0; await runTrace(false); }));
$("trace-head").addEventListener("change", () => renderTrace());
$("trace-prev").addEventListener("click", guard(() => move(-1)));
$("trace-next").addEventListener("click", guard(() => move(1)));
$("guide-start").addEventListener("click", guard(() => { quiz.walking = true; return goTo(walk()[0].name); }));
$("quiz-on").addEventListener("change", () => { setQuizOn($("quiz-on").checked); renderTrace(); });
$("beside-pick").addEventListener("change", guard(async () => {
  beside.choice = $("beside-pick").value;
  await refreshBeside(trace.body);
  renderTrace();
}));
$("quiz-new").addEventListener("click", guard(async () => { quiz.seed += 1; await runTrace(false); }));
