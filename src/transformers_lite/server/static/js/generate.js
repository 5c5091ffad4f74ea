// A generator's view: text streamed as it is sampled (POST /api/runs/NAME/generate), the prompt cut
// into the tokens the run's own tokenizer reads; a click on a token shows what the model gave at that
// point (POST .../next-token): its probabilities, the ones sampling drew from, redrawn at once as the
// temperature, top-k and top-p controls move, and where every block's head looked.
import { $, api, el, guard, notices, runPath, setStatus, showError, state, visible } from "./dom.js";
import { heatmap, matrixTable, probabilityScale } from "./scales.js";

const view = { tokens: [], sampling: null, next: null };

export function setupGenerator(info) {
  $("prompt").value = info.example.prompt;  // from the run's own validation data (panel.run_info)
  $("gen-output").replaceChildren();
  $("gen-inspect").hidden = true;
  notices("gen-notices", []);
  view.tokens = [];
}

function addToken(text, kind, unknown = false) {
  const index = view.tokens.length;
  view.tokens.push(text);
  const span = el("span", { className: `tok ${kind}${unknown ? " unknown" : ""}` }, text);
  span.dataset.index = index;
  span.addEventListener("click", guard(() => explain(index)));
  $("gen-output").append(span);
}

function numberOrNull(id) {
  const v = $(id).value.trim();
  return v === "" ? null : Number(v);
}

async function generate() {
  showError("");
  const button = $("generate");
  button.disabled = true;
  $("gen-output").replaceChildren();
  $("gen-inspect").hidden = true;
  notices("gen-notices", []);
  view.tokens = [];
  const body = {
    prompt: $("prompt").value, max_new_tokens: Number($("max-new-tokens").value),
    temperature: Number($("temperature").value), top_k: numberOrNull("top-k"), top_p: numberOrNull("top-p"),
    seed: Number($("seed").value),
  };
  view.sampling = { temperature: body.temperature, top_k: body.top_k, top_p: body.top_p };  // what each token was drawn with
  try {
    const response = await fetch(runPath(state.run, "/generate"), {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    if (!response.ok) {
      const data = await response.json().catch(() => ({}));
      throw new Error(data.error || `HTTP ${response.status}`);
    }
    const shown = [];
    setStatus("generating\u2026");
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {  // server-sent events: "event: NAME\ndata: JSON"
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const event = /^event: (.*)$/m.exec(block)[1];
        const data = JSON.parse(/^data: (.*)$/m.exec(block)[1]);
        if (event === "token") addToken(data.text, "gen");
        else if (event === "prompt") {  // the prompt cut where the run's own tokenizer cuts it
          for (const piece of data.tokens) addToken(piece, "prompt", data.unknown.some((u) => piece.includes(u)));
        }
        else if (event === "notice") { shown.push(data.message); notices("gen-notices", shown); }
        else if (event === "error") throw new Error(data.error);
        else if (event === "done") setStatus(`${data.tokens} tokens generated`);
      }
    }
  } finally {
    button.disabled = false;
  }
}

// What sampling draws from, as generation computes it (generation/sampling.py): the logits z divided by
// the temperature T, the top-k largest kept (ties too), then the fewest whose probability reaches top-p,
// then a softmax over what is left. `values` are z less its maximum, largest first.
export function drawnFrom(values, temperature, topK, topP) {
  const n = values.length;
  if (temperature === 0) return values.map((_, i) => (i === 0 ? 1 : 0));  // greedy: the argmax only
  const z = values.map((v) => v / Math.max(temperature, 1.1754943508222875e-38));
  const keep = z.map(() => true);
  if (topK && topK < n) for (let i = 0; i < n; i++) keep[i] = z[i] >= z[topK - 1];
  const softmax = (mask) => {
    const e = z.map((v, i) => (mask[i] ? Math.exp(v - z[0]) : 0));
    const total = e.reduce((a, b) => a + b, 0);
    return e.map((v) => v / total);
  };
  let p = softmax(keep);
  if (topP && topP > 0 && topP < 1) {
    let before = 0;
    for (let i = 0; i < n; i++) {  // the mass before token i reaches top-p: i and all after it are cut
      if (keep[i] && before >= topP && i > 0) keep[i] = false;
      before += p[i];
    }
    p = softmax(keep);
  }
  return p;
}

function entropyTokens(p) {  // e^H: about how many tokens the probability is spread over
  const h = p.reduce((a, x) => (x > 0 ? a - x * Math.log(x) : a), 0);
  return Math.exp(h);
}

function controlsFrom(sampling) {
  $("s-temperature").value = sampling.temperature;
  $("s-top-k").value = sampling.top_k ?? "";
  $("s-top-p").value = sampling.top_p ?? "";
}

// the bars: the model's own probability (grey) and the one drawn from under the controls (blue), for the
// likeliest tokens; a line where top-k or top-p cuts the list
export function drawSampling() {
  const next = view.next;
  if (!next) return;
  const T = Number($("s-temperature").value);
  const k = $("s-top-k").value.trim() === "" ? null : Number($("s-top-k").value);
  const topP = $("s-top-p").value.trim() === "" ? null : Number($("s-top-p").value);
  $("s-temperature-value").textContent = T.toFixed(2);
  const { tokens, values, rest, vocabulary } = next.logits;
  const model = drawnFrom(values, 1, null, null);
  const drawn = drawnFrom(values, T, k, topP);
  const box = $("next-token");
  box.replaceChildren();
  const shown = Math.min(20, tokens.length);
  const longest = Math.max(...model.slice(0, shown), ...drawn.slice(0, shown), 1e-9);  // both bars on one axis
  const keptCount = drawn.filter((p) => p > 0).length;
  const byK = k !== null && k < values.length ? values.filter((v) => v >= values[k - 1]).length : values.length;
  const why = T === 0 ? "temperature 0 (greedy)" : k !== null && keptCount === byK ? `top-k ${k}` : `top-p ${topP}`;
  for (let i = 0; i < shown; i++) {
    if (i === keptCount && keptCount < tokens.length) {
      box.append(el("div", { className: "cutoff" }, `\u2500\u2500 ${why}: the tokens below are never drawn \u2500\u2500`));
    }
    const written = tokens[i] === view.written;
    const track = (cls, p) => {
      const fill = el("div", { className: cls });
      fill.style.width = `${(100 * p) / longest}%`;
      return el("div", { className: "bar-track" }, fill);
    };
    box.append(
      el("span", { className: `bar-label${written ? " bar-row-chosen" : ""}${drawn[i] === 0 ? " cut" : ""}` }, visible(tokens[i])),
      el("div", { className: "pair" }, track("bar-model", model[i]), track("bar-fill", drawn[i])),
      el("span", { className: "bar-value", title: `${model[i]} \u2192 ${drawn[i]}` },
        `${model[i].toFixed(3)} \u2192 ${drawn[i].toFixed(3)}${written ? " \u2190 written" : ""}`),
    );
  }
  const spread = `the model's probability is spread over about ${entropyTokens(model).toFixed(1)} tokens (e^entropy); ` +
    `what is drawn from, over about ${entropyTokens(drawn).toFixed(1)}`;
  const partial = rest > 0 ? ` (from the ${tokens.length.toLocaleString("en")} likeliest of ${vocabulary.toLocaleString("en")} tokens; the others hold ${rest.toPrecision(2)} of the model's probability)` : "";
  // the bar every other is drawn against: the model's (grey), the drawn-from (blue), or both alike
  const greyTop = model.slice(0, shown).indexOf(longest), blueTop = drawn.slice(0, shown).indexOf(longest);
  const quoted = (i) => `\u201c${visible(tokens[i])}\u201d`;
  const which = greyTop >= 0 && blueTop >= 0 ? `grey and blue alike, of ${quoted(blueTop)}`
    : blueTop >= 0 ? `blue: what sampling draws ${quoted(blueTop)} from` : `grey: the model's own probability of ${quoted(greyTop)}`;
  $("sampling-note").textContent = `${spread}${partial}; the longest bar (${which}) is ${longest.toFixed(3)}, and every bar is drawn against it`;
}

async function explain(index) {
  if (index === 0) {
    notices("gen-inspect-notices", ["the first token has no text before it to predict from"]);
    return;
  }
  document.querySelectorAll(".tok.selected").forEach((s) => s.classList.remove("selected"));
  document.querySelector(`.tok[data-index="${index}"]`).classList.add("selected");
  const context = view.tokens.slice(0, index).join("");
  const sampling = view.sampling || { temperature: 1, top_k: null, top_p: null };
  const data = await api(runPath(state.run, "/next-token"), { context, ...sampling });
  view.next = data;
  view.written = view.tokens[index];
  $("gen-inspect").hidden = false;
  $("gen-at").textContent = `after \u201c${visible(context.slice(-20))}\u201d (the model then wrote \u201c${visible(view.tokens[index])}\u201d, drawn with ${data.sampling})`;
  controlsFrom(sampling);
  drawSampling();
  notices("gen-inspect-notices", data.notices);
  const grid = $("attention-grid");
  grid.replaceChildren();
  $("focus").hidden = true;
  const s = probabilityScale("attention weight");
  data.attention.forEach((block, b) => block.forEach((matrix, h) => {
    const figure = heatmap(matrix, { rows: data.tokens, cols: data.tokens, s, title: `block ${b}, head ${h}`,
      fit: 240, rowTitle: "reading", colTitle: "read" });
    const canvas = figure.querySelector("canvas.heatmap");
    canvas.addEventListener("click", () => focusHead(data, b, h));
    canvas.dataset.block = b;
    canvas.dataset.head = h;
    grid.append(figure);
  }));
}

function focusHead(data, b, h) {
  $("focus-title").textContent = `block ${b}, head ${h}`;
  matrixTable($("attention-focus"), data.attention[b][h], data.tokens, data.tokens);
  $("focus").hidden = false;
}

$("generate").addEventListener("click", guard(generate));
for (const id of ["s-temperature", "s-top-k", "s-top-p"]) $(id).addEventListener("input", drawSampling);
$("s-reset").addEventListener("click", () => { controlsFrom(view.sampling || { temperature: 1 }); drawSampling(); });
