#!/usr/bin/env bash
# The classifier trials behind the README's "what helped / what did not" (MARC dev accuracy).
#   bash experiments/classifier_trials.sh [DATA_DIR] [random|ppmi|sentiment|ensemble|all]
# "random" (the trials with random embeddings, before PPMI; about 8 minutes on 2 cores): each line
# prints the run name and its dev accuracy after every epoch, one seed.
# "ppmi" (with PPMI embeddings; about 12 minutes): each line prints the run name, the final dev
# accuracy of seeds 0, 1, 2, their mean, and the mean macro-F1.
# "sentiment" (single changes to the default recipe on the binary task, chasing tuned TF-IDF's 0.8692;
# about 13 minutes): printed like "ppmi".
# "ensemble" (word-pair vectors and ensembles of classifiers trained together; about 60 minutes):
# printed like "ppmi". The default itself and its single-classifier ablations: bench_classifier.py.
set -euo pipefail
D=${1:-${TLITE_DATA_DIR:-$(dirname "$0")/../../shared/data}}
WHICH=${2:-all}
OUT=${OUT:-outputs/classifier_trials}
TL=${TL:-.venv/bin/tlite}
mkdir -p "$OUT"
ONE=(--set members=1 --set bigram_buckets=0)  # one classifier without word pairs: every group but "ensemble"
common=(train classifier --train "$D/amazon_reviews_multi_en/train.jsonl" --val "$D/amazon_reviews_multi_en/dev.jsonl"
        --preset classifier "${ONE[@]}" --eval-every 0 --warmup-steps 200 --weight-decay 0.1 --embedding-init random)
V=(--vocab "$D/amazon_reviews_vocab/amazon_reviews_train_en.txt")
run() {
  local name=$1; shift
  rm -rf "${OUT:?}/$name"
  "$TL" "${common[@]}" "$@" --out "$OUT/$name" > "$OUT/$name.log" 2>&1
  echo "$name $(grep -o 'val_accuracy [0-9.]*' "$OUT/$name.log" | tr '\n' ' ')"
}
run3() {  # the same trial with seeds 0, 1, 2 (default `classifier` preset and training settings)
  local name=$1; shift
  local accs=() f1s=()
  for seed in 0 1 2; do
    rm -rf "${OUT:?}/$name-$seed"
    "$TL" train classifier --train "$D/amazon_reviews_multi_en/train.jsonl" --val "$D/amazon_reviews_multi_en/dev.jsonl" \
      --eval-every 0 --seed "$seed" "$@" --out "$OUT/$name-$seed" > "$OUT/$name-$seed.log" 2>&1
    accs+=("$(grep -o 'val_accuracy [0-9.]*' "$OUT/$name-$seed.log" | tail -1 | cut -d' ' -f2)")
    f1s+=("$(grep -o 'val_macro_f1 [0-9.]*' "$OUT/$name-$seed.log" | tail -1 | cut -d' ' -f2)")
  done
  mean() { printf '%s\n' "$@" | awk '{s += $1} END {printf "%.4f", s / NR}'; }
  echo "$name ${accs[*]} mean $(mean "${accs[@]}") macro-F1 mean $(mean "${f1s[@]}")"
}
if [[ $WHICH == ppmi || $WHICH == all ]]; then
  for L in 5 2; do
    run3 "P$L-default" --labels "$L" "${ONE[@]}"
    run3 "P$L-post-vocab" --labels "$L" "${ONE[@]}" "${V[@]}"
    run3 "P$L-window5" --labels "$L" "${ONE[@]}" --embedding-window 5
    run3 "P$L-6epochs" --labels "$L" "${ONE[@]}" --epochs 6
    run3 "P$L-d64" --labels "$L" "${ONE[@]}" --set dim=64 --set dim_hidden=256
    run3 "P$L-random-3epochs" --labels "$L" "${ONE[@]}" --embedding-init random
  done
fi
if [[ $WHICH == sentiment || $WHICH == all ]]; then
  run3 "Q2-2epochs" --labels 2 "${ONE[@]}" --epochs 2
  run3 "Q2-4epochs" --labels 2 "${ONE[@]}" --epochs 4
  run3 "Q2-lr2e-3" --labels 2 "${ONE[@]}" --lr 2e-3
  run3 "Q2-label-smoothing" --labels 2 "${ONE[@]}" --label-smoothing 0.1
  run3 "Q2-min-df1" --labels 2 "${ONE[@]}" --min-df 1
  run3 "Q2-256-tokens" --labels 2 "${ONE[@]}" --set max_length=256
  run3 "Q2-window20" --labels 2 "${ONE[@]}" --embedding-window 20
  run3 "Q2-wd0.01" --labels 2 "${ONE[@]}" --weight-decay 0.01
  run3 "Q2-batch64" --labels 2 "${ONE[@]}" --batch-size 64 --lr 6e-3
fi
if [[ $WHICH == ensemble || $WHICH == all ]]; then
  # the default is 8 members with 32,768 word-pair rows each; most trials ran with 131,072 rows
  big=(--set bigram_buckets=131072)
  run3 "E2-bigrams" --labels 2 --set members=1
  run3 "E2-bigrams-16k" --labels 2 --set members=1 --set bigram_buckets=16384
  run3 "E2-bigrams-131k" --labels 2 --set members=1 "${big[@]}"
  run3 "E2-bigrams-131k-256-tokens" --labels 2 --set members=1 "${big[@]}" --set max_length=256
  run3 "E2-bigrams-131k-dropout0.3" --labels 2 --set members=1 "${big[@]}" --set dropout=0.3
  run3 "E2-bigrams-131k-4epochs" --labels 2 --set members=1 "${big[@]}" --epochs 4
  run3 "E2-members3-131k" --labels 2 --set members=3 "${big[@]}"
  run3 "E2-members5-131k" --labels 2 --set members=5 "${big[@]}"
  run3 "E2-members8-131k" --labels 2 --set members=8 "${big[@]}"
  run3 "E5-members5-131k" --labels 5 --set members=5 "${big[@]}"
fi
[[ $WHICH == random || $WHICH == all ]] || exit 0
drop3=(--set dropout=0.3 --set head_dropout=0.5)
# 5 stars
run A --labels 5 "${V[@]}" --epochs 6 --lr 2e-3 --label-smoothing 0.1 "${drop3[@]}"
run B-d64 --labels 5 "${V[@]}" --epochs 6 --lr 2e-3 --label-smoothing 0.1 "${drop3[@]}" --set dim=64 --set dim_hidden=256
run C-lr4e-3 --labels 5 "${V[@]}" --epochs 6 --lr 4e-3 --label-smoothing 0.1 "${drop3[@]}"
run D-vocab-df2 --labels 5 --min-df 2 --epochs 6 --lr 2e-3 --label-smoothing 0.1 "${drop3[@]}"
run E-256-tokens --labels 5 "${V[@]}" --epochs 6 --lr 2e-3 --label-smoothing 0.1 "${drop3[@]}" --set max_length=256
run G-lr8e-3 --labels 5 "${V[@]}" --epochs 6 --lr 8e-3 --label-smoothing 0.1 "${drop3[@]}"
run H-batch64 --labels 5 "${V[@]}" --epochs 6 --lr 4e-3 --label-smoothing 0.1 "${drop3[@]}" --batch-size 64
run I-prenorm --labels 5 "${V[@]}" --epochs 6 --lr 4e-3 --label-smoothing 0.1 "${drop3[@]}" --set norm_first=true
run J-2blocks --labels 5 "${V[@]}" --epochs 6 --lr 4e-3 --label-smoothing 0.1 "${drop3[@]}" --set n_blocks=2
run K-dropout0.5 --labels 5 "${V[@]}" --epochs 6 --lr 4e-3 --set dropout=0.5 --set head_dropout=0.5
run L-8epochs --labels 5 "${V[@]}" --epochs 8 --lr 4e-3 --set dropout=0.5 --set head_dropout=0.5
run M-d64 --labels 5 "${V[@]}" --epochs 6 --lr 4e-3 --set dropout=0.5 --set head_dropout=0.5 --set dim=64 --set dim_hidden=256
run N-dropout0.6 --labels 5 "${V[@]}" --epochs 6 --lr 4e-3 --set dropout=0.6 --set head_dropout=0.6
# sentiment (the default preset and training settings otherwise)
run S-10epochs --labels 2 "${V[@]}" --epochs 10 --lr 4e-3
run S-lr2e-3 --labels 2 "${V[@]}" --epochs 6 --lr 2e-3
run S-d64 --labels 2 "${V[@]}" --epochs 6 --lr 4e-3 --set dim=64 --set dim_hidden=256
