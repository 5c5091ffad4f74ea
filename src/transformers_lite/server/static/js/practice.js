// Exercises inside the walk: a step whose kind has an exercise offers it under its map, checked on the run's
// own tensors; a wrong answer's cells are lit on the map of the step the exercise checks, in that map's
// layout (a head's (T, T) weights, the (T, C) stream), with its likely cause. An exercise takes its tensors
// from the model's first step of its kind (block 0's attention for the attention exercises) on the run's
// example input (GET /api/runs/NAME/exercises says which steps and tokens): the panel says so where that
// is not the step or the text on view, and draws the wrong cells on their own map where the layouts differ.
import { $, el, guard, showError, state } from "./dom.js";
import { cellsName, exercisePanel, exercisesFor, wrongCount } from "./exercise.js";

// the exercises of a forward step's kind, its forward one first (the backward ones: js/backward.js's)
const OF_KIND = {
  projection: ["dense-forward", "dense-backward"], softmax: ["softmax-forward", "softmax-backward"],
  "norm:layer": ["layer-norm-forward", "layer-norm-backward"], "norm:rms": ["rms-norm-backward"],
  scores: ["attention-forward", "attention-backward"], masked: ["masked-scores-backward"],
  weighted_sum: ["attention-forward", "batched-matmul-backward"], merge_heads: ["merge-heads-forward", "merge-heads-backward"],
  embedding: ["embedding-backward"], residual_sum: ["residual-backward"], tied_output: ["tied-output-backward"],
  "activation:relu": ["relu-backward"], "activation:gelu": ["gelu-backward"], "activation:silu": ["swiglu-backward"],
  product: ["swiglu-backward"], repeat_heads: ["grouped-query-attention-forward", "grouped-query-attention-backward"],
};

// the results of an exercise laid out like the values of a step of `kind` (a kind's part before ":"; "block":
// a block's output), which its wrong cells can be lit on
const LAID = {
  "dense-forward": { results: ["y"], kind: "projection" }, "softmax-forward": { results: ["p"], kind: "softmax" },
  "softmax-backward": { results: ["ds"], kind: "softmax" }, "layer-norm-forward": { results: ["y"], kind: "norm" },
  "layer-norm-backward": { results: ["dx"], kind: "norm" }, "rms-norm-backward": { results: ["dx"], kind: "norm" },
  "attention-forward": { results: ["out"], kind: "weighted_sum" }, "masked-scores-backward": { results: ["ds"], kind: "masked" },
  "grouped-query-attention-forward": { results: ["out"], kind: "weighted_sum" },
  "merge-heads-forward": { results: ["m"], kind: "merge_heads" }, "relu-backward": { results: ["da"], kind: "activation" },
  "gelu-backward": { results: ["da"], kind: "activation" }, "swiglu-backward": { results: ["da"], kind: "activation" },
  "residual-backward": { results: ["dx", "df"], kind: "residual_sum" },
  "block-forward": { results: ["y"], kind: "block" }, "block-backward": { results: ["dx"], kind: "block" },
};

// the cells lit on a step's map: {step, head (null: not per head), wrong (rows of 0/1)}
export const walkLit = { step: null, head: null, wrong: null };

let view = null;  // the step on view: {step, data, goTo, redraw}
let known = null;  // the run's exercises and where each takes its tensors
const panel = exercisePanel($("walk-exercise"), "walk-exercise", (verdict, name) => light(verdict, name));

const prefix = (kind) => kind.split(":")[0];

// a step's own exercises: its kind's; a block's last step (its output) the whole block's too; the output's
// probabilities (or its logits) the cross-entropy's gradient
export function exercisesOf(step, outline) {
  const own = [...(OF_KIND[step.kind] || [])];
  const axes = step.axes.slice(1, -1).split(", ");
  if (["V", "K"].includes(axes.at(-1)) && ["softmax", "projection", "tied_output"].includes(step.kind)) {
    if (step.kind === "softmax") own.length = 0;  // the attention's softmax exercise is not this softmax's
    own.push("cross-entropy-backward");
  }
  const inBlock = step.block ? outline.filter((s) => s.block === step.block) : [];
  if (inBlock.length && inBlock.at(-1).name === step.name) own.unshift("block-forward", "block-backward");
  return own;
}

function stepOf(name, outline) { return outline.find((s) => s.name === name) || null; }

// the step whose map an exercise's wrong cells can be lit on: among the steps it reads, or beside them
export function targetOf(name, steps, outline) {
  const laid = LAID[name];
  if (!laid || !steps.length) return null;
  const first = stepOf(steps[0], outline);
  if (!first) return null;
  if (laid.kind === "block") {
    const inBlock = first.block ? outline.filter((s) => s.block === first.block) : [];
    return inBlock.length ? inBlock.at(-1).name : null;
  }
  const hit = steps.find((n) => stepOf(n, outline) && prefix(stepOf(n, outline).kind) === laid.kind);
  if (hit) return hit;
  const beside = outline.find((s) => s.scope === first.scope && prefix(s.kind) === laid.kind);
  return beside ? beside.name : null;
}

// whether the exercise was traced on the text on view: the tokens of the target's side are the same
function sameInput(target, data) {
  const side = target && target.side === "source";
  const theirs = side ? known.source_tokens : known.tokens, ours = side ? data.source_tokens : data.tokens;
  return theirs.length === ours.length && theirs.every((t, i) => t === ours[i]);
}

function goButton(name) {
  return el("button", { className: "secondary", type: "button", onclick: guard(() => view.goTo(name)) }, `go to ${name}`);
}

// what the exercise is checked on, said beside its statement
function where(name) {
  const steps = known.steps[name] || [];
  if (!steps.length) return `This model computes none of the steps this exercise reads: try it on another run.`;
  const target = targetOf(name, steps, view.data.outline);
  const input = sameInput(stepOf(target || steps[0], view.data.outline), view.data)
    ? "the text on view" : "the run's example input (not the text on view)";
  const words = [`Checked on ${input}, with the tensors of ${steps.join(", ")}.`];
  if (target && target !== view.step.name) words.push(` A wrong answer's cells are lit on the map of ${target}: `, goButton(target));
  else if (!target) words.push(" A wrong answer's cells are drawn on their own map (no step of the walk is laid out like its result).");
  return words;
}

export async function offerExercise(step, data, goTo, redraw, hidden) {
  view = { step, data, goTo, redraw };
  const own = exercisesOf(step, data.outline);
  if (!own.length || hidden) { $("walk-exercise").hidden = true; return; }
  const run = state.run;
  known = await exercisesFor(run).catch((e) => { showError(e.message); return null; });
  if (!known || state.run !== run || view.step !== step) return;
  await panel.show(own, where);
}

export function resetPractice() {
  Object.assign(walkLit, { step: null, head: null, wrong: null });
  panel.reset();
}

// a wrong answer's cells lit on its target step's map, when the layouts and the input match
function light(verdict, name) {
  Object.assign(walkLit, { step: null, head: null, wrong: null });
  const cells = verdict.cells;
  if (!cells || !view || !known) return null;
  const steps = known.steps[name] || [];
  const target = stepOf(targetOf(name, steps, view.data.outline), view.data.outline);
  if (!target || !LAID[name].results.includes(cells.name) || !sameInput(target, view.data)) return null;
  const perHead = target.shape.length === 3;
  const shape = perHead ? target.shape.slice(1) : target.shape.length === 1 ? [1, target.shape[0]] : target.shape;
  const fits = shape[0] === cells.shape[0] && shape[1] === cells.shape[1] && cells.slice.length === (perHead ? 1 : 0);
  if (!fits) return null;
  const head = perHead ? cells.slice[0] : null;
  Object.assign(walkLit, { step: target.name, head, wrong: cells.wrong });
  const { wrong, total, sparse } = wrongCount(cells);
  const what = `${cellsName(cells)}: the ${wrong} of ${total} cells outside the tolerance`;
  if (target.name === view.step.name) {
    if (head !== null && $("trace-head").value !== String(head)) $("trace-head").value = head;
    view.redraw();
    // too many to outline (a factor, a sign, an axis): the difference's own map shows their pattern too
    const pattern = sparse ? "" : " Too many to outline one by one: the map of your result minus the expected, below, shows their pattern.";
    return { note: `Lit in yellow on this step's map${head !== null ? ` (head ${head})` : ""}: ${what}.${pattern}`, drawn: sparse };
  }
  return { note: [`Lit in yellow on the map of ${target.name}${head !== null ? ` (head ${head})` : ""}: ${what}. `, goButton(target.name)] };
}
