// A classifier's view (POST /api/runs/NAME/classify): the prediction, every class's probability, and the
// words shaded by the attention each receives in one head of one block of one member (an ensemble's
// members each have their own heads; the one on view is named).
import { $, api, el, fillSelect, guard, notices, runPath, showError, state } from "./dom.js";
import { bars, legend, probabilityScale } from "./scales.js";

const view = { data: null, label: null, example: "" };

export function setupClassifier(info) {
  $("review").value = info.example.text;
  view.example = info.example.text;
  view.label = info.example.label;  // the true class of the run's own validation example
  $("cls-result").hidden = true;
  $("cls-title").textContent = info.task.title;  // from the run's own classes (views.task_title)
  $("cls-label").textContent = view.label ? `the true label of this validation ${info.task.item}: ${view.label}` : "";
}

async function classify() {
  showError("");
  const text = $("review").value;
  const data = await api(runPath(state.run, "/classify"), { text });
  view.data = data;
  const truth = text === view.example ? view.label : null;  // known for the run's own example only
  $("cls-result").hidden = false;
  $("prediction").textContent = data.prediction + (truth ? ` (true label: ${truth})` : "");
  bars($("class-probs"), Object.entries(data.probabilities), truth ?? data.prediction, (label) => label, truth ? "true label" : "predicted");
  notices("cls-notices", data.notices);
  const members = data.members.length;
  $("cls-member").replaceChildren(...data.members.map((_, i) => el("option", { value: i }, `member ${i + 1} of ${members}`)));
  $("cls-member").parentElement.hidden = members < 2;
  fillSelect($("cls-block"), data.received.length, "block");
  fillSelect($("cls-head"), data.received[0].length, "head");
  shadeWords();
}

function shadeWords() {
  const data = view.data;
  const member = data.members[Number($("cls-member").value || 0)];
  const values = member[Number($("cls-block").value)][Number($("cls-head").value)];
  const s = probabilityScale("mean attention received");
  const n = values.length;
  $("review-words").replaceChildren(...data.words.map((word, i) => {
    const span = el("span", { className: "word", title: `attention received: ${values[i].toFixed(3)}` }, word);
    span.style.background = s.css(values[i]);
    span.style.color = s.at(values[i]) > 0.6 ? "#fff" : "";
    span.dataset.value = values[i];
    return span;
  }));
  // a head that spread its attention evenly would give every word 1/n: the baseline to read the shades against
  $("cls-baseline").textContent = `even attention would give each of the ${n} words ${(1 / n).toFixed(3)}`;
  $("cls-legend").replaceChildren(legend(s));
}

$("classify").addEventListener("click", guard(classify));
for (const id of ["cls-member", "cls-block", "cls-head"]) $(id).addEventListener("change", shadeWords);
