// The map of the run's whole model, drawn from the steps its forward pass computed (the trace's
// outline: every step's name, kind, place and shape), so it is true of this model: its blocks, and in
// each block the sub-layers in the order they ran (a pre-norm block's norm before its attention, a
// post-norm block's after the sum). Outside the blocks each step is a box; inside a block, each run of
// steps of one module (attention, its residual, the feed-forward, ...) is a box. A box names its steps
// and the shape it hands on; a click opens its first step; the box of the step on view is lit. An
// ensemble's map draws one member, its columns headed "member k of M", then the column that mixes them.
import { el } from "./dom.js";

// the outline's steps of one ensemble member (a classifier's members are alike: one is drawn)
export function visibleOutline(outline, member) {
  return outline.filter((s) => !s.member || s.member === member);
}

function lastPart(name) { return name.slice(name.lastIndexOf(".") + 1); }

function membersOf(outline) { return new Set(outline.filter((s) => s.member).map((s) => s.member)).size; }

function memberNumber(member) { return Number(member.slice(member.lastIndexOf(".") + 1)) + 1; }

// a sentence under the map of an ensemble: how many members, which one is drawn ("" for one model)
export function mapNote(outline, member) {
  const n = membersOf(outline);
  if (n < 2) return "";
  return `An ensemble of ${n} members: each reads the input with its own weights and computes its own logits. ` +
    `The map draws member ${memberNumber(member)} (the other ${n - 1} have the same steps), then the ${n} members' logits mixed into one prediction.`;
}

// groups (a block, or the run of steps outside blocks between two of them), each a list of boxes
export function boxesOf(outline) {
  const groups = [];
  for (const step of outline) {
    let group = groups[groups.length - 1];
    if (!group || group.block !== step.block || group.member !== step.member) {
      groups.push(group = { block: step.block, member: step.member, boxes: [] });
    }
    let box = group.boxes[group.boxes.length - 1];
    if (!box || !step.block || box.scope !== step.scope) group.boxes.push(box = { scope: step.scope, steps: [] });
    box.steps.push(step);
  }
  return groups;
}

// a module's name, its words free to wrap (the full name is the box's tooltip); in an ensemble, a name that
// several boxes outside the blocks share says whose it is: the member's (what it hands back, or its head's)
// or the members' mixed
function boxTitle(box, inBlock, members, shared) {
  if (inBlock) return lastPart(box.scope).replace(/_/g, " ");
  const step = box.steps[0], name = lastPart(step.name).replace(/_/g, " ");
  if (members < 2 || !shared.has(name)) return name;
  if (step.kind === "mixture") return `${name} of the ${members} members, mixed`;
  if (step.member && step.scope === step.member) return `member ${memberNumber(step.member)}'s ${name}`;
  return step.member ? `${lastPart(step.scope)} ${name}` : name;
}

function shape(step) { return `(${step.shape.join(", ")})`; }

// the map as elements; `current` is the name of the step on view, `open(name)` goes to a step
export function drawDiagram(outline, member, current, open) {
  const groups = boxesOf(visibleOutline(outline, member));
  const members = membersOf(outline);
  const outside = groups.filter((g) => !g.block).flatMap((g) => g.boxes.map((b) => lastPart(b.steps[0].name).replace(/_/g, " ")));
  const shared = new Set(outside.filter((name, i) => outside.indexOf(name) !== i));  // names of more than one box
  const out = [];
  groups.forEach((group, g) => {
    const inBlock = Boolean(group.block);
    const column = el("div", { className: inBlock ? "map-group block" : "map-group" });
    // a member's block by its name within the member (the outline's steps on view are all that member's)
    if (inBlock) column.append(el("div", { className: "map-block-name" }, group.block.slice(member ? member.length + 1 : 0)));
    else if (members > 1) {  // an ensemble's columns: one member's, then the mixture's
      column.append(el("div", { className: "map-block-name" }, group.member ? `member ${memberNumber(group.member)} of ${members}` : `all ${members} members`));
    }
    group.boxes.forEach((box, b) => {
      const names = box.steps.map((s) => lastPart(s.name));
      const lit = box.steps.some((s) => s.name === current);
      const node = el("button", { className: `map-box${lit ? " lit" : ""}`, type: "button", title: box.steps.map((s) => s.name).join("\n") },
        el("span", { className: "map-title" }, boxTitle(box, inBlock, members, shared)),
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
