#!/usr/bin/env bash
# The classifier trials behind the README's "what helped / what did not" (MARC dev accuracy).
# Each line prints the run name and its dev accuracy after every epoch. About 8 minutes on 2 cores.
#   bash benchmarks/classifier_trials.sh [DATA_DIR]
set -euo pipefail
D=${1:-${TLITE_DATA_DIR:-$(dirname "$0")/../../shared/data}}
OUT=${OUT:-outputs/classifier_trials}
TL=${TL:-.venv/bin/tlite}
mkdir -p "$OUT"
common=(train classifier --train "$D/amazon_reviews_multi_en/train.jsonl" --val "$D/amazon_reviews_multi_en/dev.jsonl"
        --preset classifier --eval-every 0 --warmup-steps 200 --weight-decay 0.1)
V=(--vocab "$D/amazon_reviews_vocab/amazon_reviews_train_en.txt")
run() {
  local name=$1; shift
  rm -rf "${OUT:?}/$name"
  "$TL" "${common[@]}" "$@" --out "$OUT/$name" > "$OUT/$name.log" 2>&1
  echo "$name $(grep -o 'val_accuracy [0-9.]*' "$OUT/$name.log" | tr '\n' ' ')"
}
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
