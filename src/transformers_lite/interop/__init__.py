"""Exchanging checkpoints with other libraries: Hugging Face GPT-2 in and out."""
