// Try it yourself: an exercise of the path, written in the page and checked on this run's own tensors
// (GET /api/exercises: statements, stubs and hints; POST /api/runs/NAME/exercise: the code runs confined,
// given only the step's tensors, and the verdict comes back: passed, the line that says where and by how
// much an answer differs, its likely cause, and its wrong cells). One panel builder serves the walk (the
// exercise of a forward step's kind) and the backward view (the exercise of a gradient's step). Where an
// exercise takes its tensors on this run (GET /api/runs/NAME/exercises: the steps it reads and the tokens it
// was traced on) lets the walk light a wrong answer's cells on the map of the step it checks.
import { api, el, guard, runPath, setStatus, state } from "./dom.js";
import { absMax, heatmap, signedScale } from "./scales.js";

// the run's exercises and where each takes its tensors, asked once per run (a promise, shared by the panels;
// asking for the list with ?run= makes the checker ready for this run while the learner writes)
let known = { run: null, promise: null };

export function exercisesFor(run) {
  if (known.run !== run) {
    const list = api(`/api/exercises?run=${encodeURIComponent(run)}`);
    const where = api(runPath(run, "/exercises"));
    known = { run, promise: Promise.all([list, where]).then(([l, w]) => ({ list: l.exercises, ...w })) };
    known.promise.catch(() => { if (known.run === run) known = { run: null, promise: null }; });  // asked again next time
  }
  return known.promise;
}

// The panel inside `root`: every element's id starts with `prefix` ("exercise": the backward view's).
// `onVerdict(verdict, exercise)` may draw a wrong answer's cells elsewhere (a step's own map) and return
// {note, drawn}: words (or elements) saying where, and whether the step on view shows them (then no map of
// their own is drawn here); without it a wrong answer's cells are drawn on their own map here.
export function exercisePanel(root, prefix, onVerdict = () => null) {
  const id = (part) => `${prefix}-${part}`;
  const node = {};
  const make = (part, tag, props = {}, ...children) => (node[part] = el(tag, { id: id(part), ...props }, ...children));
  root.replaceChildren(
    make("open", "button", { className: "secondary", type: "button" }),
    make("body", "div", { hidden: true },
      el("p", { className: "settings" }, el("label", {}, "exercise ", make("pick", "select", { ariaLabel: "exercise" })),
        el("span", { className: "muted" }, "(the step's own, or any other of the path)")),
      make("where", "p", { className: "muted" }),
      make("statement", "div"),
      make("code", "textarea", { rows: 12, spellcheck: false, ariaLabel: "your function" }),
      el("p", { className: "settings" }, make("check", "button", {}, "Check on this run"),
        make("hint", "button", { className: "secondary" }, "a hint"),
        el("span", { className: "muted" }, "runs your function on this run's tensors in float64 and compares it with PyTorch or autograd")),
      make("hints", "ol", { className: "hints" }),
      make("verdict", "p", { className: "verdict", role: "status" }),
      make("cause", "p", { className: "cause", hidden: true }),
      make("cells", "div")),
  );
  const panel = { node, open: null, chosen: false, exercises: null, where: "" };

  // the panel for a step: `own` its exercises (the first is chosen until the learner picks another), `where`
  // what the exercise is checked on, in words (a function of the exercise's name)
  panel.show = async (own, where = () => "") => {
    const run = state.run;
    const known = await exercisesFor(run);
    if (state.run !== run) return;
    panel.exercises = known.list;
    if (!node.pick.options.length) {
      node.pick.replaceChildren(...known.list.map((e, k) => el("option", { value: e.name }, `${k + 1}. ${e.title}`)));
    }
    if (own.length && !panel.chosen) node.pick.value = own[0];
    panel.whereOf = where;
    root.hidden = false;
    choose(node.pick.value);
  };
  panel.reset = () => {
    Object.assign(panel, { open: null, chosen: false });
    node.pick.replaceChildren();
    node.body.hidden = true;
    root.hidden = true;
  };

  function choose(name) {
    const e = panel.exercises.find((x) => x.name === name);
    node.open.textContent = `Try it yourself: ${e.title}`;
    if (panel.open !== name) {
      panel.open = name;
      node.code.value = e.stub;
      for (const part of ["verdict", "cells", "hints"]) node[part].replaceChildren();
      node.cause.hidden = true;
      node.verdict.className = "verdict";
    }
    node.where.replaceChildren(...[].concat(panel.whereOf ? panel.whereOf(name) : []));
    node.statement.replaceChildren(
      el("p", {}, `${e.title} (${e.part}), the exercise ${e.name}:`),
      el("pre", {}, `${e.statement}\n\nShapes:\n${e.shapes}`),
    );
  }

  async function check() {
    const name = panel.open, run = state.run;
    setStatus("checking your function on this run's tensors\u2026");
    const verdict = await api(runPath(run, "/exercise"), { name, code: node.code.value });
    setStatus("");
    if (state.run !== run || panel.open !== name) return;
    // the process clock counts in ticks of a few milliseconds
    const took = verdict.cpu_s === null ? "" : ` (your function took ${verdict.cpu_s < 0.005 ? "under 5 ms" : `${Math.round(1000 * verdict.cpu_s)} ms`} of CPU)`;
    // the likely cause on its own line, where the checker recognised one
    const message = verdict.cause ? verdict.message.replace(/(; likely cause: .*| \(likely cause: .*\))$/, "") : verdict.message;
    node.verdict.textContent = (verdict.passed ? "\u2713 " : "\u2717 ") + message + took;
    node.verdict.className = verdict.passed ? "verdict passed" : "verdict failed";
    node.cause.hidden = !verdict.cause;
    node.cause.textContent = verdict.cause ? `likely cause: ${verdict.cause}` : "";
    const { note = null, drawn = false } = onVerdict(verdict, name) || {};
    node.cells.replaceChildren(...(note ? [el("p", { className: "lit-note" }, ...[].concat(note))] : []), ...(drawn ? [] : ownMap(verdict.cells)));
    if (verdict.printed) node.cells.prepend(el("pre", { className: "printed" }, `your function printed:\n${verdict.printed}`));
  }

  function nextHint() {
    const e = panel.exercises.find((x) => x.name === panel.open);
    const shown = node.hints.children.length;
    if (shown < e.hints.length) node.hints.append(el("li", {}, e.hints[shown]));
  }

  node.open.addEventListener("click", () => { node.body.hidden = !node.body.hidden; });
  node.check.addEventListener("click", guard(check));
  node.hint.addEventListener("click", nextHint);
  node.pick.addEventListener("change", () => { panel.chosen = true; choose(node.pick.value); });
  return panel;
}

// how many of a verdict's cells are wrong, and whether few enough to outline one by one
export function wrongCount(cells) {
  const wrong = cells.wrong.reduce((n, row) => n + row.reduce((a, b) => a + b, 0), 0);
  const total = cells.shape[0] * cells.shape[1];
  return { wrong, total, sparse: wrong <= Math.max(50, total / 20) };
}

export function cellsName(cells) { return cells.slice.length ? `${cells.name}[${cells.slice.join(", ")}]` : cells.name; }

// a wrong answer's own map: the learner's value minus the expected one, the cells outside the tolerance
// outlined (a few: an index slip) or left to the colours (most: a factor, a sign)
function ownMap(cells) {
  if (!cells) return [];
  const { wrong, total, sparse } = wrongCount(cells);
  const s = signedScale(absMax(cells.difference), "your value \u2212 the expected");
  const said = sparse ? `outlined: the ${wrong} of ${total} cells outside the tolerance`
    : `${wrong} of ${total} cells are outside the tolerance (too many to outline: the colours show the pattern)`;
  return [heatmap(cells.difference, { s, outlined: sparse ? cells.wrong : null, title: `${cellsName(cells)}: your result minus the expected; ${said}` })];
}
