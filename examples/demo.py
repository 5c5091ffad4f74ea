"""The `make demo` job (placeholder until the use-case issues land): build both seed presets and
print their parameter tables."""

from transformers_lite import build_model, get_preset, summary

for name in ("seed-classifier", "seed-gpt"):
    print(f"== {name}")
    print(summary(build_model(get_preset(name))))
