// The map of the run's whole model, drawn from the steps its forward pass computed (the trace's
// outline: every step's name, kind, place and shape), so it is true of this model: its blocks, and in
// each block the sub-layers in the order they ran (a pre-norm block's norm before its attention, a
// post-norm block's after the sum). Outside the blocks each step is a box; inside a block, each run of
// steps of one module (attention, its residual, the feed-forward, ...) is a box. A box names its steps
// and the shape it hands on; a click opens its first step; the box of the step on view is lit.
import { el } from "./dom.js";

// the outline's steps of one ensemble member (a classifier's members are alike: one is drawn)
export function visibleOutline(outline, member) {
  return outline.filter((s) => !s.member || s.member === member);
}

function lastPart(name) { return name.slice(name.lastIndexOf(".") + 1); }

// groups (a block, or the run of steps outside blocks between two of them), each a list of boxes
export function boxesOf(outline) {
  const groups = [];
  for (const step of outline) {
    let group = groups[groups.length - 1];
    if (!group || group.block !== step.block) groups.push(group = { block: step.block, boxes: [] });
    let box = group.boxes[group.boxes.length - 1];
    if (!box || !step.block || box.scope !== step.scope) group.boxes.push(box = { scope: step.scope, steps: [] });
    box.steps.push(step);
  }
  return groups;
}

function boxTitle(box, inBlock) {  // a module's name, its words free to wrap (the full name is the box's tooltip)
  return (inBlock ? lastPart(box.scope) : lastPart(box.steps[0].name)).replace(/_/g, " ");
}

function shape(step) { return `(${step.shape.join(", ")})`; }

// the map as elements; `current` is the name of the step on view, `open(name)` goes to a step
export function drawDiagram(outline, member, current, open) {
  const groups = boxesOf(visibleOutline(outline, member));
  const out = [];
  groups.forEach((group, g) => {
    const inBlock = Boolean(group.block);
    const column = el("div", { className: inBlock ? "map-group block" : "map-group" });
    // a member's block by its name within the member (the outline's steps on view are all that member's)
    if (inBlock) column.append(el("div", { className: "map-block-name" }, group.block.slice(member ? member.length + 1 : 0)));
    group.boxes.forEach((box, b) => {
      const names = box.steps.map((s) => lastPart(s.name));
      const lit = box.steps.some((s) => s.name === current);
      const node = el("button", { className: `map-box${lit ? " lit" : ""}`, type: "button", title: box.steps.map((s) => s.name).join("\n") },
        el("span", { className: "map-title" }, boxTitle(box, inBlock)),
        inBlock ? el("span", { className: "map-steps" }, names.join(" \u00b7 ")) : el("span", { className: "map-steps" }, box.steps[0].kind));
      node.dataset.steps = box.steps.map((s) => s.name).join(" ");
      node.dataset.scope = box.scope;
      node.addEventListener("click", () => open(box.steps[0].name));
      column.append(node);
      const last = box.steps[box.steps.length - 1];
      if (b < group.boxes.length - 1) column.append(el("div", { className: "map-arrow" }, `\u2193 ${shape(last)}`));
    });
    out.push(column);
    if (g < groups.length - 1) {
      const lastBox = group.boxes[group.boxes.length - 1];
      out.push(el("div", { className: "map-arrow across" }, `\u2192`, el("br"), shape(lastBox.steps[lastBox.steps.length - 1])));
    }
  });
  return out;
}
