#!/usr/bin/env bash
# The own-data table of docs/results/own-data.md: each set of build.py trained for MINUTES (default 3) with
# the family's default preset and with `--preset auto`, scored on the held-out test part beside the tuned
# baseline (tfidf-svm) or copying the source. One JSON line per result; run on a quiet machine, one at a time:
#
#   bash experiments/own_data/table.sh DATA_DIR OUT_DIR [MINUTES]
#   PRESETS=auto bash experiments/own_data/table.sh DATA_DIR OUT_DIR      # --preset auto only
#   OPTIONS="--word-split punct" SETS="fortunes sections" bash experiments/own_data/table.sh DATA_DIR OUT_DIR
#
# OPTIONS are added to every classifier's training command; SETS picks sets (default: all four).
# DATA_DIR is what `python experiments/own_data/build.py DATA_DIR` wrote; runs go under OUT_DIR.
set -euo pipefail
data=$1 out=$2 minutes=${3:-3} presets=${PRESETS:-default auto} sets=${SETS:-fortunes sections priority gettext}
read -ra options <<<"${OPTIONS:-}"
py=${PYTHON:-.venv/bin/python}
tlite() { "$py" -m transformers_lite "$@"; }
mkdir -p "$out"
field() { "$py" -c "import json, sys; d = json.loads(sys.stdin.readline()); print(json.dumps({k: d.get(k) for k in sys.argv[1:]}))" "$@"; }

for set in fortunes sections priority; do
  [[ " $sets " == *" $set "* ]] || continue
  [ -f "$data/$set/train.csv" ] || { echo "{\"set\": \"$set\", \"skipped\": \"no $data/$set/train.csv\"}"; continue; }
  extra=()
  [ "$set" = priority ] && extra=(--label-map required,important,standard,optional,extra --ordinal)
  for preset in $presets; do
    choice=()
    [ "$preset" = auto ] && choice=(--preset auto)
    run=$out/$set-$preset
    tlite train classifier --train "$data/$set/train.csv" "${extra[@]}" "${choice[@]}" "${options[@]}" \
      --max-minutes "$minutes" --out "$run" >"$run.log" 2>&1
    scores=$(tlite evaluate "$run" --data "$data/$set/test.csv" --json | field accuracy macro_f1)
    echo "{\"set\": \"$set\", \"preset\": \"$preset\", \"minutes\": $minutes, \"test\": $scores}"
  done
  baseline=$(tlite baseline tfidf-svm --train "$data/$set/train.csv" --val "$data/$set/test.csv" "${extra[@]}" --json \
    | field accuracy macro_f1)
  echo "{\"set\": \"$set\", \"preset\": \"tfidf-svm\", \"test\": $baseline}"
done

if [[ " $sets " == *" gettext "* ]] && [ -f "$data/gettext/train.jsonl" ]; then
  for preset in $presets; do
    choice=()
    [ "$preset" = auto ] && choice=(--preset auto)
    run=$out/gettext-$preset
    tlite train seq2seq --train-src "$data/gettext/train.jsonl" "${choice[@]}" --max-minutes "$minutes" --out "$run" \
      >"$run.log" 2>&1
    scores=$(tlite evaluate "$run" --src "$data/gettext/test.de" --ref "$data/gettext/test.en" --json \
      | field bleu chrf copy_source_bleu copy_source_chrf)
    echo "{\"set\": \"gettext\", \"preset\": \"$preset\", \"minutes\": $minutes, \"test\": $scores}"
  done
fi
