#!/usr/bin/env bash
# The own-data table of docs/results/own-data.md: each set of build.py trained for MINUTES with `--preset auto`
# (and/or the family's default preset), for each SEED, scored on the held-out test part beside the strong baseline
# of its kind of data, with every command's wall time. One JSON line per result; run on a quiet machine, one at a
# time, then summarize:
#
#   bash experiments/own_data/table.sh DATA_DIR OUT_DIR [MINUTES ...] > OUT_DIR.jsonl     # default minutes: 3 10
#   python experiments/own_data/summarize.py OUT_DIR.jsonl                                  # the markdown table
#
#   SEEDS="0 1 2"              the seeds (default: 0 1 2)
#   PRESETS="auto default"     --preset auto, the family's default preset, or both (default: auto)
#   SETS="sections gettext"    which sets (default: fortunes sections priority gettext email)
#   OPTIONS="--word-split punct"   added to every classifier's training command
#
# The baselines are fitted once per set (they have no seed and no budget): tfidf-svm for the tables (its C
# chosen on validation), copying and the translation memory for the pairs, xz -9e given the training text
# and the character n-gram model for the corpus. DATA_DIR is what `python experiments/own_data/build.py
# DATA_DIR` wrote; runs go under OUT_DIR.
set -euo pipefail
data=$1 out=$2
shift 2
minutes_list=${*:-3 10}
seeds=${SEEDS:-0 1 2} presets=${PRESETS:-auto} sets=${SETS:-fortunes sections priority gettext email}
read -ra options <<<"${OPTIONS:-}"
py=${PYTHON:-.venv/bin/python}
tlite() { "$py" -m transformers_lite "$@"; }
mkdir -p "$out"
# a JSON object of some fields of a JSON line (stdin), or of a file's JSON (--file PATH)
field() { "$py" -c "import json, sys; d = json.loads(sys.stdin.readline()); print(json.dumps({k: d.get(k) for k in sys.argv[1:]}))" "$@"; }
now() { date +%s.%N; }
since() { "$py" -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))" "$1" "$(now)"; }
# what the run recorded of its choice and of how its minutes were spent
recorded() {
  "$py" - "$1" <<'EOF'
import json, pathlib, sys
run = pathlib.Path(sys.argv[1])
hyper = json.loads((run / "hyperparameters.json").read_text())
budget = json.loads((run / "budget.json").read_text()) if (run / "budget.json").exists() else None
notes = hyper.get("notes") or ""
chose = notes.split(" (")[0].removeprefix("--preset auto chose ") if notes.startswith("--preset auto") else hyper["preset"]
print(json.dumps({"chose": chose, "notes": notes, "race": hyper.get("race"), "budget": budget}))
EOF
}
want() { [[ " $sets " == *" $1 "* ]]; }

# train RUN_NAME FAMILY MINUTES SEED PRESET ARGS...: one run, its wall time and what it recorded, as JSON fields
train() {
  local name=$1 family=$2 minutes=$3 seed=$4 preset=$5
  shift 5
  local choice=() run=$out/$name began
  [ "$preset" = auto ] && choice=(--preset auto)
  began=$(now)
  tlite train "$family" "$@" "${choice[@]}" --max-minutes "$minutes" --seed "$seed" --out "$run" >"$run.log" 2>&1
  echo "\"wall_s\": $(since "$began"), \"run\": $(recorded "$run")"
}

for set in fortunes sections priority; do
  want "$set" || continue
  [ -f "$data/$set/train.csv" ] || { echo "{\"set\": \"$set\", \"skipped\": \"no $data/$set/train.csv\"}"; continue; }
  extra=()
  [ "$set" = priority ] && extra=(--label-map required,important,standard,optional,extra --ordinal)
  began=$(now)
  baseline=$(tlite baseline tfidf-svm --train "$data/$set/train.csv" --val "$data/$set/test.csv" "${extra[@]}" --json \
    | field accuracy macro_f1 seconds)
  echo "{\"set\": \"$set\", \"baseline\": \"tfidf-svm\", \"wall_s\": $(since "$began"), \"test\": $baseline}"
  for minutes in $minutes_list; do
    for preset in $presets; do
      for seed in $seeds; do
        fields=$(train "$set-$preset-$minutes-s$seed" classifier "$minutes" "$seed" "$preset" \
          --train "$data/$set/train.csv" "${extra[@]}" "${options[@]}")
        scores=$(tlite evaluate "$out/$set-$preset-$minutes-s$seed" --data "$data/$set/test.csv" --no-plots --json \
          | field accuracy macro_f1)
        echo "{\"set\": \"$set\", \"preset\": \"$preset\", \"minutes\": $minutes, \"seed\": $seed, $fields, \"test\": $scores}"
      done
    done
  done
done

if want gettext && [ -f "$data/gettext/train.jsonl" ]; then
  began=$(now)
  tlite baseline copy memory --train-src "$data/gettext/train.jsonl" --val-src "$data/gettext/test.jsonl" --json \
    | while read -r line; do
        echo "{\"set\": \"gettext\", \"baseline\": $(echo "$line" | field baseline bleu chrf seconds)}"
      done
  echo "{\"set\": \"gettext\", \"baselines_wall_s\": $(since "$began")}"
  for minutes in $minutes_list; do
    for preset in $presets; do
      for seed in $seeds; do
        fields=$(train "gettext-$preset-$minutes-s$seed" seq2seq "$minutes" "$seed" "$preset" \
          --train-src "$data/gettext/train.jsonl")
        scores=$(tlite evaluate "$out/gettext-$preset-$minutes-s$seed" --data "$data/gettext/test.jsonl" --json \
          | field bleu chrf copy_source_bleu copy_source_chrf)
        echo "{\"set\": \"gettext\", \"preset\": \"$preset\", \"minutes\": $minutes, \"seed\": $seed, $fields, \"test\": $scores}"
      done
    done
  done
fi

if want email && [ -d "$data/email/train" ]; then
  began=$(now)
  tlite baseline xz char-ngram --text "$data/email/train" --val-text "$data/email/test" --json \
    | while read -r line; do
        echo "{\"set\": \"email\", \"baseline\": $(echo "$line" | field baseline bits_per_char alone_bits_per_char order seconds)}"
      done
  echo "{\"set\": \"email\", \"baselines_wall_s\": $(since "$began")}"
  for minutes in $minutes_list; do
    for preset in $presets; do
      for seed in $seeds; do
        fields=$(train "email-$preset-$minutes-s$seed" generator "$minutes" "$seed" "$preset" \
          --text "$data/email/train" --tokenizer bpe)
        scores=$(tlite evaluate "$out/email-$preset-$minutes-s$seed" --text "$data/email/test" --json \
          | field bits_per_char loss n_chars)
        echo "{\"set\": \"email\", \"preset\": \"$preset\", \"minutes\": $minutes, \"seed\": $seed, $fields, \"test\": $scores}"
      done
    done
  done
fi
