"""Generation on token ids: sampling, KV-cached decoding, beam search."""
