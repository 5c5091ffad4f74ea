// What every view shares: the page's state, building elements, calling the API, showing errors and
// notices. Every view imports this module (and scales.js, matrices.js for drawing); the backward walk also
// goes to the forward walk's steps.

export const $ = (id) => document.getElementById(id);

// the run on view and what its family's views keep between events
export const state = { run: null, info: null, runs: [] };

export async function api(path, body) {
  const options = body === undefined ? {} :
    { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const response = await fetch(path, options);
  const data = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw Object.assign(new Error(data.error || `HTTP ${response.status}`), { status: response.status });
  return data;
}

export function runPath(name, suffix = "") {
  return `/api/runs/${name.split("/").map(encodeURIComponent).join("/")}${suffix}`;
}

export function showError(message) {
  const box = $("errors");
  box.textContent = message;
  box.hidden = !message;
}

export function setStatus(text) { $("status").textContent = text; }

export function notices(id, list) {
  $(id).replaceChildren(...(list || []).map((text) => el("p", { className: "notice" }, text)));
}

export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  for (const child of children) node.append(child);
  return node;
}

export function svgEl(tag, attrs = {}) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

// a token as it can be seen: a newline as ↵, a space as ␣, nothing as ∅
export function visible(text) {
  return String(text).replace(/\n/g, "\u21b5").replace(/ /g, "\u2423") || "\u2205";
}

export function fillSelect(select, count, label) {
  select.replaceChildren(...Array.from({ length: count }, (_, i) => el("option", { value: i }, `${label} ${i}`)));
}

// an event handler whose errors land in the page's error box, not the console
export function guard(fn) {
  return (...args) => Promise.resolve().then(() => fn(...args)).catch((e) => { showError(e.message); setStatus(""); });
}
