"""``python -m transformers_lite`` is the same as ``tlite``."""

from .cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
