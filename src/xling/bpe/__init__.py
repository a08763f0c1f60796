"""BPE in the paper's three modes (joint, per language, per language with a language prefix),
the SubwordTokenizer later stages segment with, and anchor-point counts."""

from xling.bpe.anchors import anchor_stats, anchors_report, anchors_table, write_anchors, write_anchors_table
from xling.bpe.build import apply_bpe, build_bpe
from xling.bpe.manifest import MODES, bpe_signature, canonical_setting, prefix_token, read_manifest
from xling.bpe.sample import JointSample, sample_params
from xling.bpe.tokenizer import SubwordTokenizer

__all__ = [
    "JointSample", "MODES", "SubwordTokenizer", "anchor_stats", "apply_bpe", "anchors_report", "anchors_table",
    "bpe_signature", "build_bpe", "canonical_setting", "prefix_token", "read_manifest", "sample_params",
    "write_anchors", "write_anchors_table",
]
