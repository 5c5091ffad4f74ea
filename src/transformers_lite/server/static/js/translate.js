// A translator's view (POST /api/runs/NAME/translate): the translation and, per decoder block and head,
// the cross-attention of each target token written over the source tokens read.
import { $, api, fillSelect, guard, notices, runPath, showError, state } from "./dom.js";
import { matrixTable, probabilityScale } from "./scales.js";

const view = { data: null };

export function setupTranslator(info) {
  $("source").value = info.example.text;
  $("mt-result").hidden = true;
}

async function translate() {
  showError("");
  const button = $("translate");
  button.disabled = true;
  try {
    const data = await api(runPath(state.run, "/translate"), { text: $("source").value, beam: Number($("beam").value) });
    view.data = data;
    $("mt-result").hidden = false;
    $("translation").textContent = data.translation;
    notices("mt-notices", data.notices);
    fillSelect($("mt-block"), data.attention.length, "block");
    fillSelect($("mt-head"), data.attention[0].length, "head");
    drawAlignment();
  } finally {
    button.disabled = false;
  }
}

function drawAlignment() {
  const data = view.data;
  const matrix = data.attention[Number($("mt-block").value)][Number($("mt-head").value)];
  matrixTable($("alignment"), matrix, data.target_tokens, data.source_tokens, probabilityScale("cross-attention weight"));
}

$("translate").addEventListener("click", guard(translate));
$("mt-block").addEventListener("change", drawAlignment);
$("mt-head").addEventListener("change", drawAlignment);
