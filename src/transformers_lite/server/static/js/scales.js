// Scales, legends and axes: what a colour means, said once for the whole page.
//
//   blue, 0 to 1 ......... a probability or an attention weight (always on the fixed 0-1 scale)
//   SIGNED (below) ....... a signed value, centred on 0: its colour and its words for each sign
//   red .................. a loss (darker: higher)
//   grey ................. masked (-inf: may not be read)
//
// The colour maps are d3's (vendor/d3.v7.9.0.min.js, loaded before the modules): perceptually even
// and readable by colour-blind eyes. A square root spreads the small values, so one large weight does
// not wash out the rest; each legend draws the same square root, so its numbers sit where their colour is.
/* global d3 */
import { el, svgEl, visible } from "./dom.js";

// The signed scale, defined once: d3's PuOr runs from purple (t = 0) through white to orange (t = 1), and
// -max sits at t = 0. Every word the page says about signed colours comes from here: each signed legend's
// words, the headings' colour names (elements marked data-signed="negative" / "positive", filled by
// nameSignedColours) and, through a test, docs/inspector.md.
export const SIGNED = Object.freeze({ interpolate: (t) => d3.interpolatePuOr(t), negative: "purple", zero: "white", positive: "orange" });

export const MASKED_RGB = [205, 205, 205];
const MASKED = `rgb(${MASKED_RGB.join(", ")})`;
export const number = (x) => (x === null ? "\u2212\u221e (masked)" : Number.isInteger(x) ? String(x) : d3.format(".4~g")(x));
const tick = d3.format(".3~g");

function table(interpolator) {  // 256 colours, looked up instead of interpolated per cell
  const out = [];
  for (let i = 0; i < 256; i++) {
    const c = d3.rgb(interpolator(i / 255));
    out.push([c.r, c.g, c.b]);
  }
  return out;
}
const BLUES = table((t) => d3.interpolateBlues(0.03 + 0.97 * t));
const SIGNED_COLOURS = table(SIGNED.interpolate);  // index 0: -max (negative), 255: +max (positive)
const REDS = table(d3.interpolateReds);

// the colour names of the page's headings, from SIGNED: <span data-signed="positive"></span> reads "orange",
// with a swatch of the colour it names
export function nameSignedColours(root = document) {
  const end = { negative: SIGNED_COLOURS[38], zero: SIGNED_COLOURS[128], positive: SIGNED_COLOURS[217] };  // well inside each end
  for (const node of root.querySelectorAll("[data-signed]")) {
    const which = node.dataset.signed;
    if (!(which in end)) throw new Error(`data-signed="${which}": the signed scale has negative, zero and positive`);
    node.replaceChildren(el("span", { className: "swatch", style: `background: rgb(${end[which].join(", ")})` }), SIGNED[which]);
  }
}

function scale(kind, lo, hi, colours, title) {
  const diverging = kind === "signed";
  const span = hi - lo || 1;
  // where a value sits on the colour bar, 0..1 (the square root spreads the small ones)
  const at = diverging
    ? (v) => 0.5 + 0.5 * Math.sign(v) * Math.sqrt(Math.min(1, Math.abs(v) / (hi || 1)))
    : (v) => Math.sqrt(Math.min(1, Math.max(0, (v - lo) / span)));
  const rgb = (v) => (v === null || v === undefined || Number.isNaN(v) ? MASKED_RGB : colours[Math.round(255 * at(v))]);
  return { kind, lo, hi, title, at, rgb, css: (v) => `rgb(${rgb(v).join(", ")})` };
}

// a probability or attention weight: blue, always 0 to 1, so maps compare at a glance
export const probabilityScale = (title = "probability") => scale("probability", 0, 1, BLUES, title);
// a signed value centred on 0, up to +-max (the largest |value| of what it is shared by); values that are
// all 0 are drawn white on a scale of +-1, and its legend says so (its ends are 0)
export function signedScale(max, title = "value") {
  if (max > 0) return scale("signed", -max, max, SIGNED_COLOURS, title);
  return { ...scale("signed", -1, 1, SIGNED_COLOURS, title), lo: 0, hi: 0, constant: true };
}
// a loss from 0 to max: red
export const lossScale = (max, title = "loss") => scale("loss", 0, max || 1e-9, REDS, title);
// an attention mask as it is added: 0 (may be read, white as a signed 0) or -inf (masked, grey)
export const maskScale = () => ({ ...scale("signed", -1, 1, SIGNED_COLOURS, "the mask"), kind: "mask", lo: 0, hi: 0 });

// the largest |value| of nested arrays (a step's values, any depth), null (masked) left out; a loop, not
// Math.max(...values) or .flat(): a (H, T, T) step at context 256 holds a quarter of a million values
export function absMax(values) {
  let max = 0;
  for (const v of values) {
    if (Array.isArray(v)) max = Math.max(max, absMax(v));
    else if (v !== null && v !== undefined && Number.isFinite(v)) max = Math.max(max, Math.abs(v));
  }
  return max;
}

// the legend of a scale: its colour bar with the numbers at both ends (and 0 in the middle of a signed
// one, whose words say which colour is which sign); a mask's, or a signed scale whose values are all 0, is
// a swatch per value instead. data-lo / data-hi hold the exact ends for whoever checks them.
export function legend(s, { masked = false } = {}) {
  const box = el("div", { className: "legend" }, el("span", { className: "legend-title" }, s.title));
  box.dataset.lo = s.lo;
  box.dataset.hi = s.hi;
  box.dataset.kind = s.kind;
  const swatch = (css, words) => [el("span", { className: "swatch", style: `background: ${css}` }), el("span", { className: "muted" }, words)];
  if (s.kind === "mask") box.append(...swatch(s.css(0), "0: may be read"), ...swatch(MASKED, "\u2212\u221e: masked"));
  else if (s.constant) box.append(...swatch(s.css(0), "every value is 0"));
  else box.append(colourBar(s));
  if (s.kind === "signed" && !s.constant) {
    const words = el("span", { className: "legend-words muted" }, `${SIGNED.negative}: negative, ${SIGNED.positive}: positive`);
    Object.assign(words.dataset, { negative: SIGNED.negative, positive: SIGNED.positive });
    box.append(words);
  }
  if (masked && s.kind !== "mask") box.append(...swatch(MASKED, "masked (\u2212\u221e)"));
  return box;
}

function colourBar(s) {
  const w = 180, h = 34, bar = 10, left = 10;
  const svg = svgEl("svg", { width: w + 2 * left, height: h, class: "legend-bar" });
  const id = `g${Math.random().toString(36).slice(2)}`;
  const gradient = svgEl("linearGradient", { id });
  for (let k = 0; k <= 16; k++) {
    const t = k / 16;  // the colour at bar position t, through the scale's own square root
    const v = s.kind === "signed" ? Math.sign(t - 0.5) * (2 * t - 1) ** 2 * s.hi : s.lo + t * t * (s.hi - s.lo);
    gradient.append(svgEl("stop", { offset: t, "stop-color": s.css(v) }));
  }
  svg.append(svgEl("defs"), svgEl("rect", { x: left, y: 2, width: w, height: bar, fill: `url(#${id})`, stroke: "#c5ccd4" }));
  svg.firstChild.append(gradient);
  const ticks = s.kind === "signed" ? [s.lo, 0, s.hi] : [s.lo, s.lo + (s.hi - s.lo) / 4, s.hi];
  ticks.forEach((v, k) => {
    const x = left + w * s.at(v);
    svg.append(svgEl("line", { x1: x, y1: 2 + bar, x2: x, y2: 6 + bar, class: "axis" }));
    // the end labels run inwards from their ends, so a long number is never cut off at the edge
    const anchor = k === 0 ? "start" : k === ticks.length - 1 ? "end" : "middle";
    const label = svgEl("text", { x: k === 0 ? left - 2 : k === ticks.length - 1 ? left + w + 2 : x, y: 18 + bar, "text-anchor": anchor, class: "tick" });
    label.textContent = tick(v);
    svg.append(label);
  });
  return svg;
}

// an axis: one label per cell, or, where cells are too small to write in, one label per group of cells
// (the group's first), so every label written can be read
function labelsOf(names, count, cell, vertical) {
  const every = Math.max(1, Math.ceil(10 / cell));
  const short = names && names.every((n) => visible(n ?? "").length <= 2);  // characters: written upright
  const box = el("div", { className: `${vertical ? "axis-x" : "axis-y"}${every > 1 ? " grouped" : ""}${short ? " short" : ""}` });
  for (let i = 0; i < count; i += every) {
    const text = names ? visible(names[i] ?? "") : String(i);
    const label = el("span", {}, text);
    label.style[vertical ? "width" : "height"] = `${Math.min(every, count - i) * cell}px`;
    label.title = text;
    label.dataset.first = i;
    label.dataset.last = Math.min(i + every, count) - 1;
    box.append(label);
  }
  return box;
}

// A matrix as a labelled map: rows and columns named (tokens, or numbered channels), its colour from
// scale `s`, the exact value of the cell under the pointer written under the map, its row and column
// lit (onHover(i, j) tells the view, to light what they stand for elsewhere); `followed` outlines a row,
// `outlined` (rows of 0/1, the matrix's shape) the cells it marks, `marked` ([[row, column]]) cells drawn
// thick (what a question asked about), `lit` (rows of 0/1) cells filled yellow (where an answer is wrong).
export function heatmap(matrix, { rows = null, cols = null, s, title, small = false, followed = -1, onHover = null,
  rowTitle = "row", colTitle = "column", fit = 480, outlined = null, marked = null, lit = null }) {
  const n = matrix.length, m = n ? matrix[0].length : 0;
  const cell = small ? Math.max(2, Math.min(6, Math.floor(120 / Math.max(n, m, 1))))
    : Math.max(2, Math.min(18, Math.floor(fit / Math.max(n, m, 1))));
  const canvas = el("canvas", { className: small ? "heatmap small" : "heatmap", width: m * cell, height: n * cell });
  const pixels = new ImageData(Math.max(m, 1), Math.max(n, 1));  // one pixel per value, then scaled up
  let masked = false;
  matrix.forEach((row, i) => row.forEach((v, j) => {
    const k = 4 * (i * m + j), [r, g, b] = s.rgb(v);
    masked ||= v === null;
    pixels.data[k] = r; pixels.data[k + 1] = g; pixels.data[k + 2] = b; pixels.data[k + 3] = 255;
  }));
  const values = el("canvas", { width: Math.max(m, 1), height: Math.max(n, 1) });
  values.getContext("2d").putImageData(pixels, 0, 0);
  const ctx = canvas.getContext("2d");
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(values, 0, 0, m * cell, n * cell);
  const overlay = el("canvas", { className: "overlay", width: m * cell, height: n * cell });
  const mark = (i) => {
    const o = overlay.getContext("2d");
    o.clearRect(0, 0, overlay.width, overlay.height);
    if (followed >= 0 && followed < n) { o.strokeStyle = "#111"; o.lineWidth = 2; o.strokeRect(1, followed * cell + 1, m * cell - 2, cell - 2); }
    if (outlined) {
      o.strokeStyle = "#111"; o.lineWidth = 1;
      outlined.forEach((row, a) => row.forEach((on, b) => { if (on) o.strokeRect(b * cell + 0.5, a * cell + 0.5, cell - 1, cell - 1); }));
    }
    if (lit) {  // filled half yellow, the value's colour still seen through; a few outlined too
      const few = lit.reduce((k, row) => k + row.reduce((x, y) => x + y, 0), 0) <= Math.max(50, (n * m) / 20);
      o.fillStyle = "rgba(255, 200, 0, 0.5)";
      o.strokeStyle = "#111"; o.lineWidth = 1;
      lit.forEach((row, a) => row.forEach((on, b) => {
        if (!on) return;
        o.fillRect(b * cell, a * cell, cell, cell);
        if (few) o.strokeRect(b * cell + 0.5, a * cell + 0.5, cell - 1, cell - 1);
      }));
    }
    for (const [a, b] of marked || []) {  // a ring around the cell, seen on a map of small cells too
      const ring = Math.max(0, Math.min(3, 8 - cell));
      o.lineWidth = 2; o.strokeStyle = "#111"; o.strokeRect(b * cell + 1 - ring, a * cell + 1 - ring, cell - 2 + 2 * ring, cell - 2 + 2 * ring);
      o.lineWidth = 1; o.strokeStyle = "#fff"; o.strokeRect(b * cell - ring - 0.5, a * cell - ring - 0.5, cell + 1 + 2 * ring, cell + 1 + 2 * ring);
    }
    if (i) { o.strokeStyle = "#111"; o.lineWidth = 1; o.strokeRect(0.5, i[0] * cell + 0.5, m * cell - 1, cell - 1); o.strokeRect(i[1] * cell + 0.5, 0.5, cell - 1, n * cell - 1); }
  };
  mark(null);
  const figure = el("figure", { className: small ? "map small" : "map" });
  figure.dataset.rows = n;
  figure.dataset.cols = m;
  if (marked && marked.length) figure.dataset.marked = JSON.stringify(marked);
  if (lit) {  // how many cells are lit, and which (up to 512 of them), for whoever checks the map
    const cells = lit.flatMap((row, a) => row.flatMap((on, b) => (on ? [[a, b]] : [])));
    figure.dataset.lit = cells.length;
    if (cells.length <= 512) figure.dataset.litCells = JSON.stringify(cells);
  }
  const stack = el("div", { className: "stack" }, canvas, overlay);
  if (small) {
    figure.append(stack, el("figcaption", {}, title));
    return figure;
  }
  const xAxis = labelsOf(cols, m, cell, true), yAxis = labelsOf(rows, n, cell, false);
  const readout = el("p", { className: "readout" }, "\u00a0");
  const light = (axis, k) => axis.querySelectorAll("span").forEach((s) =>
    s.classList.toggle("lit", Number(s.dataset.first) <= k && k <= Number(s.dataset.last)));
  const hover = (event) => {
    const i = Math.floor(event.offsetY / cell), j = Math.floor(event.offsetX / cell);
    const inside = i >= 0 && i < n && j >= 0 && j < m && matrix[i] !== undefined && matrix[i][j] !== undefined;
    mark(inside ? [i, j] : null);
    light(yAxis, inside ? i : -1);
    light(xAxis, inside ? j : -1);
    if (onHover) onHover(inside ? i : -1, inside ? j : -1);
    if (!inside) { readout.textContent = "\u00a0"; return; }
    const r = rows ? visible(rows[i] ?? "") : `${rowTitle} ${i}`, c = cols ? visible(cols[j] ?? "") : `${colTitle} ${j}`;
    readout.textContent = `${rowTitle} ${i} (${r}), ${colTitle} ${j}${cols ? ` (${c})` : ""}: ${number(matrix[i][j])}`;
    canvas.title = readout.textContent;
  };
  canvas.addEventListener("mousemove", hover);  // the overlay above lets the pointer through (CSS)
  canvas.addEventListener("mouseleave", () => hover({ offsetX: -1, offsetY: -1 }));
  const grid = el("div", { className: "map-grid" }, el("span"), xAxis, yAxis, stack);
  figure.append(el("figcaption", {}, title), grid, readout, legend(s, { masked }));
  return figure;
}

// a (J, D) matrix drawn turned, one column per row j, as wide as a strip so its columns stand under the
// columns of a (J)-long row; the column `lit` outlined
export function turnedRows(matrix, s, lit) {
  const J = matrix.length, D = matrix[0].length;
  const canvas = el("canvas", { width: J, height: D, className: "turned" });
  const ctx = canvas.getContext("2d");
  matrix.forEach((row, j) => row.forEach((x, d) => { ctx.fillStyle = s.css(x); ctx.fillRect(j, d, 1, 1); }));
  canvas.style.height = `${Math.max(24, Math.min(96, 3 * D))}px`;
  canvas.title = `${J} rows of ${D} values, row j drawn as column j`;
  const box = el("div", { className: "turned-box" }, canvas);
  box.dataset.rows = J;
  box.dataset.cols = D;
  if (lit >= 0) {
    const mark = el("div", { className: "lit-column" });
    Object.assign(mark.style, { left: `${(100 * lit) / J}%`, width: `${100 / J}%` });
    mark.dataset.column = lit;
    box.append(mark);
  }
  return box;
}


// a row of values as a strip of cells; where the cells are wide enough to tell apart, a thin line between
// two (so a row of equal values, white zeros too, still shows its cells)
export function strip(values, s) {
  const n = Math.max(values.length, 1);
  const canvas = el("canvas", { width: n, height: 1 });
  const ctx = canvas.getContext("2d");
  values.forEach((x, j) => { ctx.fillStyle = s.css(x); ctx.fillRect(j, 0, 1, 1); });
  canvas.title = `${values.length} values`;
  canvas.addEventListener("mousemove", (event) => {  // the channel under the pointer (the strip is scaled to its box)
    const j = Math.floor((event.offsetX / Math.max(canvas.clientWidth, 1)) * values.length);
    canvas.title = j >= 0 && j < values.length ? `channel ${j}: ${number(values[j])}` : `${values.length} values`;
  });
  const box = el("div", { className: "strip" }, canvas);
  if (n > 1 && n <= 160) {  // the lines between cells, drawn over the canvas whatever its width
    const cells = el("div", { className: "cells" });
    cells.style.backgroundImage = `repeating-linear-gradient(90deg, transparent 0 calc(100% / ${n} - 1px), #c5ccd4 calc(100% / ${n} - 1px) calc(100% / ${n}))`;
    box.append(cells);
  }
  return box;
}

// probabilities as bars on the fixed 0..1 axis of the largest shown; `chosen` gets its `tag`
// ("written", "true label", ...) beside its bar
export function bars(container, entries, chosen = null, show = visible, tag = "chosen") {
  const max = Math.max(...entries.map(([, p]) => p), 1e-9);
  container.replaceChildren();
  for (const [label, p] of entries) {
    const mine = label === chosen;
    const fill = el("div", { className: "bar-fill" });
    fill.style.width = `${(100 * p) / max}%`;
    container.append(
      el("span", { className: `bar-label${mine ? " bar-row-chosen" : ""}` }, show(label)),
      el("div", { className: `bar-track${mine ? " bar-row-chosen" : ""}` }, fill),
      el("span", { className: "bar-value", title: String(p) }, (p >= 0.001 || p === 0 ? p.toFixed(3) : p.toPrecision(2)) + (mine ? ` \u2190 ${tag}` : "")),
    );
  }
}

// a matrix of probabilities as a table with its tokens on both axes (a close-up or a translator's alignment)
export function matrixTable(table, matrix, rowLabels, colLabels, s = probabilityScale("attention weight")) {
  const head = el("tr", {}, el("th"), ...colLabels.map((t) => el("th", {}, visible(t))));
  const rows = matrix.map((row, i) => el("tr", {}, el("th", {}, visible(rowLabels[i] ?? "")),
    ...row.map((v, j) => {
      const td = el("td", { title: `${visible(rowLabels[i] ?? "")} \u2192 ${visible(colLabels[j] ?? "")}: ${number(v)}` });
      td.style.background = s.css(v);
      return td;
    })));
  table.replaceChildren(el("thead", {}, head), el("tbody", {}, ...rows));
  const key = legend(s);
  if (table.nextElementSibling && table.nextElementSibling.classList.contains("legend")) table.nextElementSibling.replaceWith(key);
  else table.after(key);
}

const COLORS = ["#2f6fb3", "#d95f02", "#1b9e77", "#7570b3", "#6b7785", "#e7298a", "#66a61e"];

// series [[name, {step, value, dashed}]] as lines over the optimizer step, with ticked axes and a named
// legend; `y`: a fixed [lo, hi] for the value axis (else the values' extent); `marks`: [{x, label}] drawn
// as dashed vertical lines (a moment: "formed", "now")
export function lineChart(series, xTitle = "optimizer step", { y = null, marks = [] } = {}) {
  const w = 440, h = 240, left = 50, bottom = 36, top = 10, right = 12;
  const svg = svgEl("svg", { width: w, height: h, class: "chart" });
  const xs = series.flatMap(([, s]) => s.step), ys = series.flatMap(([, s]) => s.value);
  const [x0, x1] = d3.extent(xs), [y0, y1] = y || d3.extent(ys);
  const sx = d3.scaleLinear(x1 > x0 ? [x0, x1] : [x0 - 1, x0 + 1], [left, w - right]);  // one point: in the middle
  const sy = d3.scaleLinear([y0, y1 > y0 ? y1 : y0 + 1], [h - bottom, top]);
  svg.append(svgEl("line", { x1: left, y1: h - bottom, x2: w - right, y2: h - bottom, class: "axis" }));
  svg.append(svgEl("line", { x1: left, y1: top, x2: left, y2: h - bottom, class: "axis" }));
  const text = (attrs, words) => { const t = svgEl("text", attrs); t.textContent = words; svg.append(t); };
  for (const v of sy.ticks(5)) {
    svg.append(svgEl("line", { x1: left - 4, y1: sy(v), x2: w - right, y2: sy(v), class: "grid" }));
    text({ x: left - 6, y: sy(v) + 4, "text-anchor": "end" }, sy.tickFormat(5)(v));
  }
  // steps and ranks are whole numbers: no tick between two of them (a curve of one point gets its own step)
  const whole = xs.every(Number.isInteger);
  for (const v of sx.ticks(5).filter((x) => !whole || Number.isInteger(x))) {
    svg.append(svgEl("line", { x1: sx(v), y1: h - bottom, x2: sx(v), y2: h - bottom + 4, class: "axis" }));
    text({ x: sx(v), y: h - bottom + 16, "text-anchor": "middle" }, whole ? String(v) : sx.tickFormat(5)(v));
  }
  text({ x: (left + w - right) / 2, y: h - 4, "text-anchor": "middle" }, xTitle);
  for (const mark of marks) {
    const x = sx(mark.x);
    svg.append(svgEl("line", { x1: x, y1: top, x2: x, y2: h - bottom, class: "mark", "stroke-dasharray": "3 3", stroke: mark.color || "#111" }));
    const leftward = x > w - right - 90;  // near the right end: the label left of its line
    text({ x: leftward ? x - 3 : x + 3, y: h - bottom - 4 - 12 * (mark.row || 0), "text-anchor": leftward ? "end" : "start",
      class: "mark-label", style: `fill: ${mark.color || "#111"}` }, mark.label);
  }
  series.forEach(([name, s], k) => {
    const color = COLORS[k % COLORS.length];
    const points = s.step.map((x, i) => `${sx(x).toFixed(1)},${sy(s.value[i]).toFixed(1)}`).join(" ");
    svg.append(svgEl("polyline", { points, fill: "none", stroke: color, "stroke-width": 1.5, ...(s.dashed ? { "stroke-dasharray": "5 3" } : {}) }));
    if (s.step.length === 1) svg.append(svgEl("circle", { cx: sx(s.step[0]), cy: sy(s.value[0]), r: 3, fill: color }));
    // the legend: a swatch and the name in the series' colour (inline, so the page's text colour cannot override it)
    const y = top + 10 + 15 * k;
    svg.append(svgEl("line", { x1: w - 150, y1: y - 4, x2: w - 134, y2: y - 4, stroke: color, "stroke-width": 3 }));
    text({ x: w - 130, y, style: `fill: ${color}`, class: "legend" }, name);
  });
  return svg;
}
