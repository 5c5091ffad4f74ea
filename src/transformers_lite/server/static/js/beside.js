// The walk beside another: the same step of the walk on the same input, traced a second time, drawn beside
// the step on view with their difference. Beside another run of the same family and tokenizer (the run
// info's `comparable`: the same text reads as the same tokens), or beside this run with one head switched
// off (the trace's `switch_off`): the steps before the switch do not move, every step after it does, down to
// the next-token bars, the cause and its effect through the residual stream.
import { api, el, runPath, state, visible } from "./dom.js";
import { absMax, bars, heatmap, number, probabilityScale, signedScale } from "./scales.js";
import { matrixOf } from "./matrices.js";

export const beside = { choice: "", data: null, error: "" };

// the choices: nothing, each head of the block's attention layers switched off, each comparable run
export function besideChoices(select, scopes, heads, runs) {
  const keep = select.value || beside.choice;
  const options = [el("option", { value: "" }, "nothing")];
  for (const scope of scopes) {
    for (let h = 0; h < heads; h++) options.push(el("option", { value: `off:${scope}.head.${h}` }, `this run, ${scope} head ${h} off`));
  }
  for (const run of runs) options.push(el("option", { value: `run:${run}` }, `the run ${run}`));
  const same = options.length === select.options.length && options.every((o, i) => o.value === select.options[i].value);
  if (!same) select.replaceChildren(...options);  // left as it is while the same: an open list stays open
  select.value = [...select.options].some((o) => o.value === keep) ? keep : "";
  beside.choice = select.value;
}

export function describe(choice = beside.choice) {
  if (choice.startsWith("off:")) return `${choice.slice(4).replace(".head.", " head ")} switched off`;
  return choice.startsWith("run:") ? `the run ${choice.slice(4)}` : "";
}

// the second trace of the walk's input: the body the walk traced with, for the other run or a head off
export async function refreshBeside(body) {
  const choice = beside.choice, run = state.run;
  Object.assign(beside, { data: null, error: "" });
  if (!choice) return;
  const other = choice.startsWith("run:") ? choice.slice(4) : run;
  const switched = choice.startsWith("off:") ? [...body.switch_off, choice.slice(4)] : body.switch_off;
  const asked = { ...body, switch_off: switched };
  delete asked.seed;  // no questions for the second trace
  try {
    const data = await api(runPath(other, "/trace"), asked);
    if (beside.choice === choice && state.run === run) beside.data = data;
  } catch (e) {
    beside.error = `${describe(choice)}: ${e.message}`;
  }
}

// the next token's probabilities at a position, largest first (top `k`)
function nextTokens(data, pos, k = 5) {
  const probs = data.steps.find((s) => s.name === "probabilities");
  if (!probs) return [];
  if (data.classes.length) return data.classes.map((c, i) => [c, probs.values[i]]);
  if (probs.top) return probs.top[Math.min(pos, probs.top.length - 1)].slice(0, k).map((e) => [e.token ?? String(e.id), e.value]);
  const row = probs.values[Math.min(pos, probs.values.length - 1)];
  return row.map((p, i) => [(data.vocabulary || [])[i] ?? String(i), p]).sort((a, b) => b[1] - a[1]).slice(0, k);
}

function minus(a, b) { return a.map((row, i) => row.map((v, j) => (v === null || b[i][j] === null ? null : v - b[i][j]))); }

// The step on view beside its twin: `ctx` holds the walk's answer (`data`), the step, the head, the followed
// position, the map's labels and its scale, and the side its maps fit in (`fit`).
export function renderBeside(box, ctx) {
  box.hidden = !beside.choice;
  if (box.hidden) { box.replaceChildren(); return; }
  const what = describe();
  if (beside.error || !beside.data) {
    box.replaceChildren(el("p", { className: "muted" }, beside.error || `tracing beside: ${what}\u2026`));
    return;
  }
  const { data, step, head, pos, labels, fit } = ctx;
  const twin = beside.data.steps.find((s) => s.name === step.name);
  const head3 = el("h3", {}, `Beside: ${what} `, el("span", { className: "muted" }, "(the same step on the same input; its difference: this walk's minus beside's)"));
  const out = [head3];
  const sameTokens = JSON.stringify(beside.data.tokens) === JSON.stringify(data.tokens);
  if (!sameTokens) out.push(el("p", { className: "notices" }, "the other run reads this text as other tokens: its positions do not line up with these"));
  if (!twin || !twin.values || !step.values) {
    out.push(el("p", { className: "muted" }, twin ? "this step is not drawn as a map here: compare the next-token bars below" : `${what} has no step ${step.name}`));
  } else {
    const ours = matrixOf(step, head), theirs = matrixOf(twin, head);
    const fits = ours.length === theirs.length && ours[0].length === theirs[0].length;
    const shared = step.kind === "softmax" ? probabilityScale("probability (fixed 0\u20131)")
      : signedScale(absMax([ours, theirs]), "value (one scale for both)");
    const figures = [heatmap(theirs, { ...labels, s: shared, fit, title: `beside (${what})` })];
    if (fits && sameTokens) {
      const diff = minus(ours, theirs);
      const largest = absMax(diff);
      const s = signedScale(largest, "this walk's value \u2212 beside's");
      const figure = heatmap(diff, { ...labels, s, fit, title: largest ? `the difference (largest ${number(largest)})` : "no difference: this step is the same in both" });
      figure.classList.add("difference");
      figure.dataset.largest = largest;
      figures.push(figure);
    } else {
      figures.push(el("p", { className: "muted" }, `no difference drawn: its shape here is (${step.shape.join(", ")}), beside (${twin.shape.join(", ")})`));
    }
    out.push(el("div", { className: "grid beside-maps" }, ...figures));
  }
  const mine = nextTokens(data, pos), theirs = nextTokens(beside.data, pos);
  if (mine.length && theirs.length) {  // the effect on the output, at every step: the next token's bars of both
    const ours = el("div", { className: "bars" }), other = el("div", { className: "bars" });
    const show = data.classes.length ? (label) => label : visible;
    bars(ours, mine, null, show);
    bars(other, theirs, null, show);
    const after = data.classes.length ? "the classes" : `the next token after position ${pos}`;
    out.push(el("div", { className: "grid beside-bars" }, el("div", {}, el("p", { className: "muted" }, `${after}: this walk`), ours),
      el("div", {}, el("p", { className: "muted" }, `${after}: beside (${what})`), other)));
  }
  box.replaceChildren(...out);
}
