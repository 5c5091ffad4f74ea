// A step of a trace answer as the page draws it: its values as a 2-D matrix for a head, the scale it shares
// with the steps a learner compares, what its columns are named by, and the model's number of heads. Pure
// functions of the answer, read by the forward walk, the backward walk and the walk beside another.
import { absMax, maskScale, probabilityScale, signedScale } from "./scales.js";

// a step's values as a 2-D matrix for the chosen head: (H, T, X) -> (T, X); (T,) -> one row
export function matrixOf(step, head) {
  let v = step.values;
  if (v === undefined) return null;
  if (!Array.isArray(v)) return [[v]];
  if (!Array.isArray(v[0])) return [v];
  while (Array.isArray(v[0][0])) v = v[Math.min(head, v.length - 1)];
  return v;
}

// the scale a step is drawn on, shared by the steps a learner compares: probabilities on 0-1; the scores,
// scaled and masked scores of one attention layer on one; the residual stream's (T, C) steps of one block
// (or of the steps outside blocks) on one
export function scaleOf(step, steps) {
  // an ensemble's mixture is logits (the log of the members' mean probability, at most 0): signed, not 0-1
  if (step.kind === "softmax") return probabilityScale("probability (fixed 0\u20131)");
  const scoreKinds = ["scores", "scale", "masked"];
  let group = [step], what = "this step";
  if (scoreKinds.includes(step.kind)) {
    group = steps.filter((s) => s.scope === step.scope && scoreKinds.includes(s.kind));
    what = `the scores, scaled and masked scores of ${step.scope}`;
  } else if (step.axes === "(T, C)") {
    group = steps.filter((s) => s.axes === "(T, C)" && s.block === step.block && s.values);
    what = step.block ? `the (T, C) steps of ${step.block}` : "the (T, C) steps outside the blocks";
  } else if (step.kind === "mask") {
    return maskScale();
  }
  const key = `${what}\u0000${group.length}`;  // the group's largest value, once per trace answer
  const known = SCALES.get(steps) || new Map();
  SCALES.set(steps, known);
  if (!known.has(key)) known.set(key, absMax(group.map((s) => s.values || [])));
  return signedScale(known.get(key), `value (one scale for ${what})`);
}
const SCALES = new WeakMap();  // trace answer's steps -> the largest |value| of each group drawn on one scale

export function axesOf(step) { return step.axes.slice(1, -1).split(", "); }  // one letter per axis: T tokens, S the source's

// What a step's last axis is named by, for the columns of its map: a key's or source token's token, the
// vocabulary's tokens (V), the classes (K); channels are numbered. `data` is an answer of the run that
// holds tokens and source_tokens (the backward's too), `names` the answer that holds the run's vocabulary and
// classes (a forward trace's: `data` itself, unless `data` is a backward's).
const COLUMNS = { T: "key", S: "source token", V: "token", K: "class" };
export function columnsOf(step, data, names = data) {
  const axes = axesOf(step);
  const last = axes[axes.length - 1];
  const source = data.source_tokens.length && step.name.startsWith("encoder.");  // a translator's encoder
  let cols = null;
  if (last === "V") cols = names.vocabulary || null;
  else if (last === "K") cols = names.classes && names.classes.length ? names.classes : null;
  else if (axes.length > 1 && (last === "S" || last === "T")) cols = last === "S" || source ? data.source_tokens : data.tokens;
  const colTitle = cols ? (last === "T" && source ? COLUMNS.S : COLUMNS[last]) : last === "V" ? "token id" : "channel";
  return { cols, colTitle };
}

export function headsOf(data) {  // the head axis of the queries' projection (its step plays the role "query")
  const q = data.steps.find((s) => s.role === "query");
  return q ? q.shape[0] : 1;
}
