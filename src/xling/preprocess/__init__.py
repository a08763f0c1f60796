"""Corpus preprocessing: Wikipedia/CC extraction, Moses tokenisation, segmentation, splits."""
