"""Data loaders for the three corpora and where to find them."""
