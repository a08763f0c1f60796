"""Bilingual dictionaries (PanLex, MUSE, FreeDict's dictd) and dictionary code-switching (Extra anchors)."""

from xling.codeswitch.build import build_dictionary, codeswitch_pair
from xling.codeswitch.dictd import read_dictd, write_muse_split
from xling.codeswitch.dictionary import PhraseDictionary, read_dict, read_muse, write_dict
from xling.codeswitch.panlex import DEFAULT_UIDS, read_panlex
from xling.codeswitch.switch import SwitchStats, batches, codeswitch_file, codeswitch_lines

__all__ = [
    "DEFAULT_UIDS", "PhraseDictionary", "SwitchStats", "batches", "build_dictionary",
    "codeswitch_file", "codeswitch_lines", "codeswitch_pair", "read_dict", "read_dictd", "read_muse",
    "read_panlex", "write_dict", "write_muse_split",
]
