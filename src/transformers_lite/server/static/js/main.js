// transformers-lite inspector: ES modules, no build step, nothing loaded from the network (d3 is vendored).
// dom.js and scales.js are shared; each view is one module; this one starts the page.
import { state, showError } from "./dom.js";
import { loadRuns, onRun } from "./runs.js";
import { setupGenerator } from "./generate.js";
import { setupClassifier } from "./classify.js";
import { setupTranslator } from "./translate.js";
import { renderTrace, setupTrace, trace } from "./forward.js";
import { resetBackward } from "./backward.js";
import { loadTimeline, resetTimeline } from "./timeline.js";
import { resetReplay, showReplay } from "./replay_view.js";
import { nameSignedColours } from "./scales.js";

const SETUP = { generate: setupGenerator, classify: setupClassifier, translate: setupTranslator };

onRun(
  async (info) => {  // a run's model loaded: each view starts from the run's own example
    for (const [action, setup] of Object.entries(SETUP)) if (info.actions.includes(action)) setup(info);
    resetBackward();
    await setupTrace(info);
  },
  async (picked) => {  // the timeline, from its start for a run just picked; a run still training: its new snapshots
    if (picked) { resetTimeline(); resetReplay(); }
    const data = state.info ? await loadTimeline() : null;
    if (data) showReplay(data);  // the same snapshots, replayed position by position and head by head
  },
);
nameSignedColours();  // the headings' colour names, from the one definition of the signed scale
window.tlite = { state, trace, renderTrace };  // the page's state, for a console, the tests and the benchmarks
loadRuns().catch((e) => showError(e.message));
