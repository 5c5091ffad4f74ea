#!/usr/bin/env bash
# The posts' figures, regenerated from real data with the CLI; about 4 minutes on 2 cores.
#   bash examples/post_figures.sh [DATA_DIR] [OUT_DIR]
# Writes PNGs into OUT_DIR (default docs/figures) and the runs it trains into outputs/post_figures.
set -euo pipefail
D=${1:-${TLITE_DATA_DIR:-$(dirname "$0")/../../shared/data}}
FIG=${2:-docs/figures}
RUNS=${RUNS:-outputs/post_figures}
TL=${TL:-.venv/bin/tlite}
R=$D/amazon_reviews_multi_en
mkdir -p "$FIG" "$RUNS"
set -x
# post 000: review lengths, the sinusoidal encoding (heatmap and waves)
"$TL" data lengths "$R/train.jsonl" --plot "$FIG"
"$TL" inspect sinusoid --dim 32 --length 50 --out "$FIG"
# post 004 section 2.3: word statistics and character frequencies of tiny Shakespeare
"$TL" data stats "$D/tinyshakespeare/input.txt" --plot "$FIG"
# post 004: a post-gpt run (1 minute), then learned vs sinusoidal positions and the whole-vocabulary bars
rm -rf "$RUNS/gpt"
"$TL" train generator --text "$D/tinyshakespeare/input.txt" --preset post-gpt --max-minutes 1 --out "$RUNS/gpt"
"$TL" inspect positions "$RUNS/gpt" --out "$FIG"
"$TL" inspect next-token "$RUNS/gpt" --prompt "ROMEO:" --all-tokens --out "$FIG"
# post 000: the binary model (one logit) as the post trained it, with and without dropout, and with post
# 003's dropout after the position encoding too: training and validation accuracy per epoch (evaluated
# before the first step too), and probabilities per true star
for p in 0.0 0.1 0.1+input; do
  rm -rf "$RUNS/binary-dropout$p"
  "$TL" train classifier --train "$R/train.jsonl" --preset post-classifier-original --labels 1 --vocab "$D/amazon_reviews_vocab/amazon_reviews_train_en.txt" \
    --set dropout="${p%+input}" --set input_dropout="$([ "$p" = 0.1+input ] && echo 0.1 || echo 0.0)" --out "$RUNS/binary-dropout$p"
done
"$TL" inspect compare "$RUNS/binary-dropout0.0" "$RUNS/binary-dropout0.1" "$RUNS/binary-dropout0.1+input" --metric accuracy --out "$FIG"
"$TL" evaluate "$RUNS/binary-dropout0.1" --data "$R/dev.jsonl" --json
cp "$RUNS/binary-dropout0.1/probabilities_by_star.png" "$FIG/"
ls "$FIG"
