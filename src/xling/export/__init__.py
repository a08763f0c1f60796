"""Pretrained models in formats other tools load (``transformers``)."""

from xling.export.huggingface import Pretokenizer, export_model, exportable

__all__ = ["Pretokenizer", "export_model", "exportable"]
