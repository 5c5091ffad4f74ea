#!/usr/bin/env bash
# The GPU figures of BENCHMARKS.md ("On a GPU"): each family trained through `tlite` on one CUDA device,
# and nanoGPT side by side. Run from the repository root on a machine with a GPU:
#
#   TLITE_DATA_DIR=DATA benchmarks/bench_cuda.sh PART NANOGPT_DIR OUT_DIR
#
# DATA is laid out like ../shared/data; NANOGPT_DIR is a nanoGPT checkout kept outside the repository
# (its model.py, train.py, configurator.py, config/ and data/shakespeare_char/ with input.txt, the same
# tiny Shakespeare). PART is one of
#   smoke       every family for a few steps under --bf16 and --compile, then generate/evaluate (finds what breaks)
#   speed       training tokens/s, project against nanoGPT's model.py in one process, alternating:
#               float32, bf16 autocast, bf16 + torch.compile (both sides compiled)
#   generator   time to quality: nanoGPT's train_shakespeare_char recipe (5,000 steps) in nanoGPT's train.py,
#               then the same model and recipe through `tlite train generator`
#   classifier  the default classifier (8 members) and one member, end to end, with dev accuracy
#   translator  the default translator (18 epochs) and its validation BLEU, beam 4 and greedy, for each
#               random seed in SEEDS (default 0)
#   speedrun    Muon's cost per step on the GPU (bench_muon.py), then the speedrun ablation's final rows
#               (experiments/speedrun_ablation.py: today's preset, Muon + wsd, and the combination) for
#               STEPS steps (default 2000) per random seed in SEEDS (default 0), under bf16 and torch.compile
#               (NANOGPT_DIR is not used: pass .)
# Each part writes its logs and runs under OUT_DIR and prints one JSON line per result.
set -euo pipefail
part=$1 nanogpt=$(cd "$2" && pwd) out=$3
data=${TLITE_DATA_DIR:?set TLITE_DATA_DIR to the corpora folder}
py=${PYTHON:-python3}
tlite() { "$py" -m transformers_lite "$@"; }
mkdir -p "$out"
export PYTHONUNBUFFERED=1
shakespeare=$data/tinyshakespeare/input.txt
reviews=$data/amazon_reviews_multi_en
m=$data/multi30k
dev=${DEVICE:-cuda}
gpu=$("$py" -c "import torch; print(torch.cuda.get_device_name(0) if \"$dev\".startswith(\"cuda\") else \"cpu\")")

timed() {  # timed NAME CMD...: run CMD, log under OUT_DIR/NAME.log, print its wall seconds as JSON
  local name=$1 start end
  shift
  start=$(date +%s.%N)
  "$@" >"$out/$name.log" 2>&1 || { tail -20 "$out/$name.log"; return 1; }
  end=$(date +%s.%N)
  awk -v n="$name" -v s="$start" -v e="$end" -v g="$gpu" 'BEGIN { printf "{\"run\": \"%s\", \"wall_s\": %.1f, \"device\": \"%s\"}\n", n, e - s, g }'
}

# nanoGPT's train_shakespeare_char model and recipe, in the project's words
char_model=(--preset baby-gpt --set n_blocks=6 --set dim=384 --set n_heads=6 --set dim_hidden=1536
  --set max_length=256 --set dropout=0.2 --batch-size 64 --lr 1e-3 --weight-decay 0.1 --beta2 0.99
  --warmup-steps 100 --min-lr-ratio 0.1 --max-steps 5000 --max-minutes 60 --val-fraction 0.1)

case $part in
smoke)
  cuda=(--device "$dev" --bf16 --compile)
  timed smoke-generator tlite train generator --text "$shakespeare" --preset baby-gpt --max-steps 30 "${cuda[@]}" --out "$out/g"
  tlite generate "$out/g" --prompt "ROMEO:" --max-new-tokens 80 --seed 1
  tlite evaluate "$out/g" --json
  timed smoke-classifier tlite train classifier --train "$reviews/train.jsonl" --val "$reviews/dev.jsonl" --labels 5 \
    --max-steps 30 "${cuda[@]}" --out "$out/c"
  tlite evaluate "$out/c" --data "$reviews/dev.jsonl" --json
  pairs=(--train-src "$m/train.de.gz" --train-tgt "$m/train.en.gz" --val-src "$m/val.de.gz" --val-tgt "$m/val.en.gz")
  timed smoke-translator tlite train seq2seq "${pairs[@]}" --max-steps 30 --device "$dev" --bf16 --out "$out/t"
  tlite translate "$out/t" "Zwei Hunde spielen im Schnee." --beam 4
  # its batches vary in length: torch.compile builds a graph per shape
  timed smoke-translator-compiled timeout 240 "$py" -m transformers_lite train seq2seq "${pairs[@]}" --max-steps 30 \
    "${cuda[@]}" --out "$out/tc" || echo '{"run": "smoke-translator-compiled", "failed": true}'
  ;;
speed)
  for flags in "" "--bf16" "--bf16 --compile --compile-reference"; do
    # shellcheck disable=SC2086
    "$py" benchmarks/bench_vs_reference.py train --device "$dev" --nanogpt "$nanogpt" --only d384 --batch 64 \
      --steps 20 --repeats 5 $flags | grep '^{'
  done
  ;;
generator)
  (cd "$nanogpt/data/shakespeare_char" && "$py" prepare.py >/dev/null)
  (cd "$nanogpt" && timed nanogpt-shakespeare-char "$py" train.py config/train_shakespeare_char.py --out_dir="$out/nanogpt")
  grep -E "^step [0-9]+:" "$out/nanogpt-shakespeare-char.log" | tail -2
  timed tlite-char-compiled tlite train generator --text "$shakespeare" "${char_model[@]}" --device "$dev" --bf16 --compile \
    --out "$out/ours-compiled"
  tlite evaluate "$out/ours-compiled" --json | grep -E '"(loss|perplexity)"'
  ;;
classifier)
  for members in 8 1; do
    timed "classifier-members-$members" tlite train classifier --train "$reviews/train.jsonl" --val "$reviews/dev.jsonl" \
      --labels 5 --device "$dev" --set members=$members --out "$out/c$members"
    tlite evaluate "$out/c$members" --data "$reviews/dev.jsonl" --json | grep -E '"(accuracy|macro_f1)"'
  done
  ;;
translator)
  for seed in ${SEEDS:-0}; do
    timed "translator-default-seed-$seed" tlite train seq2seq --train-src "$m/train.de.gz" --train-tgt "$m/train.en.gz" \
      --val-src "$m/val.de.gz" --val-tgt "$m/val.en.gz" --device "$dev" --seed "$seed" --out "$out/t$seed"
    for beam in 4 1; do
      timed "translator-evaluate-seed-$seed-beam-$beam" tlite evaluate "$out/t$seed" --src "$m/val.de.gz" \
        --ref "$m/val.en.gz" --beam $beam --json
      grep -E '"(bleu|chrf)"' "$out/translator-evaluate-seed-$seed-beam-$beam.log"
    done
  done
  ;;
speedrun)
  for preset in baby-gpt small-gpt; do
    "$py" benchmarks/bench_muon.py --device "$dev" --preset $preset --repeats 50
  done
  # shellcheck disable=SC2086
  "$py" experiments/speedrun_ablation.py --steps "${STEPS:-2000}" --seeds "$(echo ${SEEDS:-0} | tr ' ' ,)" \
    --only base muon-lr0.01-wsd combined --device "$dev" --bf16 --compile | tee "$out/speedrun.jsonl"
  ;;
*)
  echo "unknown part $part: smoke, speed, generator, classifier, translator or speedrun" >&2
  exit 2
  ;;
esac
