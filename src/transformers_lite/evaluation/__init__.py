"""Metrics: accuracy, F1, confusion matrix, perplexity, BLEU."""
