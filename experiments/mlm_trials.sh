#!/usr/bin/env bash
# Pretrain, then fine-tune: the trials behind the pretraining table of docs/results/classifier.md (MARC dev).
#   bash experiments/mlm_trials.sh [DATA_DIR] [TRIAL ...]
# Each pretraining trial trains one `tlite train mlm` run on the training reviews (their text only),
# then fine-tunes one classifier of the default recipe (no word pairs, no ensemble) from it (`--init-from`) with seeds 0, 1, 2 on 5 stars and on
# sentiment. Each line prints: trial, pretraining seconds, 5-star dev accuracy of the 3 seeds, mean
# accuracy, mean macro-F1, then the same for sentiment. About 4 minutes per trial on 2 cores.
# Trials: none (PPMI, no pretraining: the default before), mlm-random, mlm, mlm-20, mlm-d64 (d 64, 2 blocks),
# mlm-frozen (PPMI embeddings kept fixed while the block pretrains), causal, mlm-extra, ft-decay, ft-freeze; default: all of them.
set -euo pipefail
D=${1:-${TLITE_DATA_DIR:-$(dirname "$0")/../../shared/data}}
shift || true
TRIALS=("$@")
[[ ${#TRIALS[@]} -gt 0 ]] || TRIALS=(none mlm-random mlm mlm-20 mlm-d64 mlm-frozen causal mlm-extra ft-decay ft-freeze)
OUT=${OUT:-outputs/mlm_trials}
TL=${TL:-.venv/bin/tlite}
R=$D/amazon_reviews_multi_en
ONE=(--set members=1 --set bigram_buckets=0)  # one classifier without word pairs, as when these trials ran
mkdir -p "$OUT"

pretrain() {  # name, then flags for `tlite train mlm`; prints the pretraining wall time
  local name=$1; shift
  rm -rf "${OUT:?}/$name"
  "$TL" train mlm --reviews "$R/train.jsonl" "$@" --out "$OUT/$name" > "$OUT/$name.log" 2>&1
  grep -o 'wall_s [0-9.]*' "$OUT/$name.log" | tail -1 | cut -d' ' -f2
}
finetune() {  # name, then flags for `tlite train classifier`; prints "acc acc acc mean ACC f1 F1" per task
  local name=$1; shift
  for labels in 5 2; do
    local accs=() f1s=()
    for seed in 0 1 2; do
      local run="$OUT/$name-L$labels-s$seed"
      rm -rf "${run:?}"
      "$TL" train classifier --train "$R/train.jsonl" --val "$R/dev.jsonl" --labels "$labels" --seed "$seed" \
        "${ONE[@]}" "$@" --out "$run" > "$run.log" 2>&1
      accs+=("$(grep -o 'val_accuracy [0-9.]*' "$run.log" | tail -1 | cut -d' ' -f2)")
      f1s+=("$(grep -o 'val_macro_f1 [0-9.]*' "$run.log" | tail -1 | cut -d' ' -f2)")
    done
    printf '| L%s %s mean %s f1 %s ' "$labels" "${accs[*]}" \
      "$(printf '%s\n' "${accs[@]}" | awk '{s += $1} END {printf "%.4f", s / NR}')" \
      "$(printf '%s\n' "${f1s[@]}" | awk '{s += $1} END {printf "%.4f", s / NR}')"
  done
  echo
}
extra_text() {  # out-of-domain unlabelled text: the English side of Multi30k, one caption per line
  [[ -f "$OUT/multi30k.en.txt" ]] || gzip -dc "$D/multi30k/train.en.gz" > "$OUT/multi30k.en.txt"
  echo "$OUT/multi30k.en.txt"
}

for trial in "${TRIALS[@]}"; do
  case $trial in
    none) echo "none 0 $(finetune none)" ;;
    mlm-random) t=$(pretrain mlm-random --embedding-init random --epochs 20); echo "mlm-random $t $(finetune mlm-random --init-from "$OUT/mlm-random")" ;;
    mlm) t=$(pretrain mlm --embedding-init ppmi --epochs 10); echo "mlm $t $(finetune mlm --init-from "$OUT/mlm")" ;;
    mlm-20) t=$(pretrain mlm-20 --embedding-init ppmi --epochs 20); echo "mlm-20 $t $(finetune mlm-20 --init-from "$OUT/mlm-20")" ;;
    causal) t=$(pretrain causal --embedding-init ppmi --epochs 10 --set objective=causal); echo "causal $t $(finetune causal --init-from "$OUT/causal")" ;;
    mlm-d64) t=$(pretrain mlm-d64 --embedding-init ppmi --epochs 20 --set dim=64 --set dim_hidden=256 --set n_blocks=2)
      echo "mlm-d64 $t $(finetune mlm-d64 --init-from "$OUT/mlm-d64")" ;;
    mlm-frozen) t=$(pretrain mlm-frozen --embedding-init ppmi --epochs 10 --freeze-embedding)
      echo "mlm-frozen $t $(finetune mlm-frozen --init-from "$OUT/mlm-frozen")" ;;
    mlm-extra) t=$(pretrain mlm-extra --embedding-init ppmi --epochs 10 --text "$(extra_text)"); echo "mlm-extra $t $(finetune mlm-extra --init-from "$OUT/mlm-extra")" ;;
    ft-decay) [[ -d $OUT/mlm ]] || pretrain mlm --embedding-init ppmi --epochs 10 > /dev/null; echo "ft-decay - $(finetune ft-decay --init-from "$OUT/mlm" --layer-lr-decay 0.5)" ;;
    ft-freeze) [[ -d $OUT/mlm ]] || pretrain mlm --embedding-init ppmi --epochs 10 > /dev/null; echo "ft-freeze - $(finetune ft-freeze --init-from "$OUT/mlm" --freeze-encoder-steps 200)" ;;
    *) echo "unknown trial $trial" >&2; exit 2 ;;
  esac
done
