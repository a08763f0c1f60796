"""Pretrained models in formats other tools load (``transformers``)."""

from xling.export.huggingface import Pretokenizer, export_model, exportable, language_inputs

__all__ = ["Pretokenizer", "export_model", "exportable", "language_inputs"]
