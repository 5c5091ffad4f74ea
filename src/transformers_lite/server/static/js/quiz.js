// Predict, then reveal: in the guided walk, before a step's map is shown, one question about this run on
// this input (the trace's `questions`, asked for with a seed: inspect/questions.py makes one per step from
// the step's record and this run's tensors). The learner answers (a number, a choice, a shape) or skips;
// then the map is shown, the run's value beside theirs, how close it was, the asked cell outlined on the
// map, and the walk's score. One switch turns the questions off (remembered in this browser).
import { $, el, visible } from "./dom.js";

const STORE = "tlite.questions";

// `of`: the run, input and seed the answers are about (another starts a new score); `walking`: the learner
// started the walk (a step opened from the map or a chip is shown at once)
export const quiz = { on: remembered() !== "off", seed: 1, walking: false, of: "", answers: new Map() };

function remembered() {
  try { return localStorage.getItem(STORE); } catch { return null; }  // storage may be off: then on
}

export function setQuizOn(on) {
  quiz.on = on;
  try { localStorage.setItem(STORE, on ? "on" : "off"); } catch { /* kept for this page only */ }
}

// the answers so far belong to one run, input and seed; a new one of these starts the score again
export function startQuiz(of) {
  if (quiz.of !== of) Object.assign(quiz, { of, answers: new Map() });
}

export function questionOf(step, data) { return (data.questions || {})[step.name] || null; }

// whether the step's map waits for an answer
export function asking(step, data) {
  return quiz.on && quiz.walking && Boolean(questionOf(step, data)) && !quiz.answers.has(step.name);
}

export function score() {
  const all = [...quiz.answers.values()];
  const skipped = all.filter((a) => a.skipped).length, answered = all.length - skipped;
  const right = all.filter((a) => a.right).length;
  return { right, answered, skipped };
}

export function scoreText() {
  const { right, answered, skipped } = score();
  if (!answered && !skipped) return "no answer yet";
  return `${right} of ${answered} right${skipped ? `, ${skipped} skipped` : ""}`;
}

// the value at `index` of nested arrays: a number, or a row when the index stops one axis short
function at(values, index) {
  let v = values;
  for (const i of index) {
    if (!Array.isArray(v) || i >= v.length) return undefined;
    v = v[i];
  }
  return v;
}

function short(name) { return name.slice(name.lastIndexOf(".") + 1); }

// what the walk showed that the question is made from: each value it uses at the asked index (or the row)
function shownValues(q, data) {
  if (!q.index) return [];
  const out = [];
  for (const name of q.uses) {
    const step = data.steps.find((s) => s.name === name);
    const v = step && step.values !== undefined ? at(step.values, q.index) : undefined;
    if (v === undefined) continue;
    const where = `${short(name)}[${q.index.join(", ")}]`;
    if (Array.isArray(v)) {
      out.push(el("p", { className: "row-values" }, el("span", { className: "muted" }, `${where}, the row it read: `),
        ...v.slice(0, 64).map((x, j) => el("span", { className: "num" }, `${j}: ${x === null ? "\u2212\u221e" : x}`))));
    } else {
      out.push(el("p", { className: "shown" }, `${where} = ${v === null ? "\u2212\u221e" : v}`));
    }
  }
  return out;
}

// the sizes a shape is made of: this input's tokens and the model's settings
function sizes(data, info) {
  const c = (info && info.config) || {};
  const parts = [`T = ${data.tokens.length} tokens here`];
  if (data.source_tokens.length) parts.push(`${data.source_tokens.length} source tokens`);
  for (const [letter, key] of [["C", "dim"], ["H", "n_heads"], ["F", "dim_hidden"], ["V", "vocab_size"]]) {
    if (Number.isInteger(c[key])) parts.push(`${letter} = ${c[key]}`);
  }
  if (Number.isInteger(c.dim) && Number.isInteger(c.n_heads)) parts.push(`D = C / H = ${c.dim / c.n_heads}`);
  return parts.join(", ");
}

function axesOf(q) {
  const m = q.prompt.match(/\(([A-Z](?:, [A-Z])*)\)$/);
  return m ? m[1].split(", ") : q.answer.map(() => "");
}

// a typed number: "0.1234", "-1,5", "−2e-3"; NaN when it is none
export function parseNumber(text) {
  const t = String(text).trim().replace(/\u2212/g, "-").replace(",", ".");
  return t === "" ? NaN : Number(t);
}

// A value is right within the question's tolerance (what the page's rounding of the values can move it),
// or when it is the run's value rounded to the decimals the learner gave (at least 3 significant digits):
// a learner who writes 3.964 for 3.96359 has it right to the digits they wrote.
export function judgeValue(text, q) {
  const x = parseNumber(text);
  if (!Number.isFinite(x)) return null;
  const off = Math.abs(x - q.answer);
  const mantissa = String(text).trim().replace(/^[-\u2212+]/, "").replace(/[eE].*$/, "");
  const decimals = (mantissa.split(/[.,]/)[1] || "").length;
  const digits = mantissa.replace(/[.,]/, "").replace(/^0+/, "").length;
  const exponent = Number((String(text).match(/[eE]([-+]?\d+)/) || [0, 0])[1]);
  const unit = 10 ** (exponent - decimals);
  const rounded = digits >= 3 && off <= 0.5 * unit * (1 + 1e-9);
  return { given: x, off, right: off <= q.tolerance || rounded, byDigits: off > q.tolerance && rounded, decimals };
}

function judge(q, given) {
  if (q.kind === "value") return judgeValue(given, q);
  if (q.kind === "shape") {
    const dims = given.map(parseNumber);
    if (dims.some((d) => !Number.isInteger(d))) return null;
    return { given: dims, right: dims.length === q.answer.length && dims.every((d, i) => d === q.answer[i]) };
  }
  return { given, right: given === q.answer };  // a choice or a sign: the index of the choice
}

const shown = (x) => String(Number(x.toPrecision(6)));  // a value as the learner compares it: 6 digits

function answerWords(q, value) {
  if (q.kind === "value") return shown(value);
  if (q.kind === "shape") return `(${value.join(", ")})`;
  return visible(q.choices[value] ?? String(value));
}

// The question box: asking (the prompt, what it is made from, an input and "skip"), or, once answered, the
// verdict beside the run's answer. `done()` redraws the step (its map now shown).
export function renderQuestion(box, step, data, info, done) {
  const q = questionOf(step, data);
  const answer = quiz.answers.get(step.name);
  box.hidden = !quiz.on || !quiz.walking || !q;
  if (box.hidden) { box.replaceChildren(); return; }
  box.dataset.kind = q.kind;
  if (answer) { box.dataset.state = "revealed"; box.replaceChildren(...revealed(q, answer)); return; }
  box.dataset.state = "asking";
  const record = (given) => {
    const verdict = given === null ? { skipped: true } : judge(q, given);
    if (!verdict) { $("question-error").textContent = q.kind === "shape" ? "write a whole number for each axis" : "write a number"; return; }
    quiz.answers.set(step.name, verdict);
    done(q);
  };
  const parts = [el("p", { className: "question-lead" }, "Before the map: ", el("strong", { id: "question-prompt" }, q.prompt))];
  parts.push(...shownValues(q, data));
  if (q.kind === "shape") parts.push(el("p", { className: "muted" }, sizes(data, info)));
  const input = el("span", { className: "question-input" });
  if (q.kind === "value") {
    const field = el("input", { id: "question-value", type: "text", inputMode: "decimal", autocomplete: "off", placeholder: "your value" });
    field.addEventListener("keydown", (e) => { if (e.key === "Enter") record(field.value); });
    input.append(field, el("button", { id: "question-answer", onclick: () => record(field.value) }, "answer"));
  } else if (q.kind === "shape") {
    const fields = axesOf(q).map((letter) => el("input", { className: "narrow", type: "text", inputMode: "numeric", placeholder: letter, ariaLabel: `size of ${letter}` }));
    const read = () => record(fields.map((f) => f.value));
    fields.forEach((f) => f.addEventListener("keydown", (e) => { if (e.key === "Enter") read(); }));
    input.append("(", ...fields.flatMap((f, i) => (i ? [", ", f] : [f])), ")", el("button", { id: "question-answer", onclick: read }, "answer"));
  } else {
    input.append(...q.choices.map((c, i) => el("button", { className: "secondary choice", onclick: () => record(i) }, visible(c))));
  }
  parts.push(el("p", { className: "settings" }, input, el("button", { id: "question-skip", className: "secondary", onclick: () => record(null) }, "skip"),
    el("span", { id: "question-error", className: "notices" })));
  box.replaceChildren(...parts);
  const first = box.querySelector("input");
  if (first) first.focus({ preventScroll: true });
}

function revealed(q, answer) {
  const run = answerWords(q, q.answer);
  const line = el("p", { id: "question-verdict", className: `verdict ${answer.skipped ? "" : answer.right ? "passed" : "failed"}` });
  line.dataset.right = answer.skipped ? "" : answer.right ? "1" : "0";
  line.dataset.answer = q.kind === "value" ? q.answer : JSON.stringify(q.answer);
  if (answer.skipped) line.textContent = `skipped: the run's answer is ${run}`;
  else {
    const mine = q.kind === "value" ? String(answer.given) : answerWords(q, answer.given);
    let how = "";
    if (q.kind === "value") {
      const percent = q.answer !== 0 ? (100 * answer.off) / Math.abs(q.answer) : null;
      const relative = percent === null ? "" : ` (${percent < 10 ? percent.toFixed(1) : Math.round(percent)} %)`;
      how = answer.byDigits ? `; right to the ${answer.decimals} decimals you gave` : answer.right ? "" : `; off by ${shown(answer.off)}${relative}`;
    }
    line.textContent = `${answer.right ? "\u2713 right" : "\u2717 not this time"}: the run's ${q.kind === "value" ? "value" : "answer"} ${run}, yours ${mine}${how}`;
  }
  return [el("p", { className: "question-lead muted" }, q.prompt), line];
}

// the cells a question asked about, on the step's map: {head (or null), cells [[row, column]]}; the asked
// row's cells for a question about a row (the largest weight's or token's cell for a choice among them)
export function askedCells(q, step) {
  if (!q || !q.index || !step.shape) return null;
  const index = q.index, dims = step.shape.length;
  if (step.kind === "mask") return { head: null, cells: [index.slice(-2)] };
  const perHead = dims === 3;
  const head = perHead ? index[0] : null;
  const rest = perHead ? index.slice(1) : index;
  if (dims === 1) return { head, cells: [[0, rest[0]]] };
  if (rest.length === 2) return { head, cells: [rest] };
  const row = rest[0], width = step.shape[dims - 1];
  if (q.kind === "choice" && step.kind === "softmax") {
    const column = q.choice_ids ? q.choice_ids[q.answer] : q.answer;
    return { head, cells: [[row, column]] };
  }
  return { head, cells: Array.from({ length: width }, (_, j) => [row, j]) };
}
