"""Figure 7's en': English paraphrases obtained by back-translation (en -> fr -> en'). XNLI-15way
already holds the human French translation of every English row, so only the fr -> en leg is
machine translated, with a Marian model (Helsinki-NLP/opus-mt-fr-en) through ``transformers``.

The download stage fetches each model file on its own, so the model arrives as a mapping of
file name -> path and is laid out in a temporary directory for ``from_pretrained``."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Callable, Mapping, Sequence

from xling.analysis.run import fifteen_way
from xling.errors import InputError
from xling.io import atomic_write
from xling.progress import progress as progress_bar

Log = Callable[[str], None]

# What MarianTokenizer and MarianMTModel read from a directory. The tokenizer needs both
# SentencePiece models and the shared vocab.json; the model needs config.json and one weights file.
REQUIRED_FILES = ("config.json", "source.spm", "target.spm", "vocab.json")
WEIGHTS_FILES = ("model.safetensors", "pytorch_model.bin")  # either one; safetensors wins if both
# Read when present: language codes for the tokenizer, decoding defaults (older checkpoints carry
# the same defaults, e.g. the ban on generating <pad>, in config.json).
OPTIONAL_FILES = ("tokenizer_config.json", "generation_config.json")


# --- model files -------------------------------------------------------------------------------

def _check_files(files: Mapping[str, str | Path], required: Sequence[str], what: str) -> dict[str, Path]:
    """The given files as paths, after checking every required one is named and exists."""
    paths = {}
    for name, path in files.items():
        if Path(name).name != name:
            raise InputError(path, None, f"a plain file name as the key for {path}", name)
        path = Path(path)
        if not path.is_file():
            raise InputError(path, None, f"the {what} model file {name}", "no such file")
        paths[name] = path
    for name in required:
        if name not in paths:
            raise InputError(name, None, f"a path for the {what} model file {name}", "none given")
    if not any(name in paths for name in WEIGHTS_FILES):
        raise InputError(" or ".join(WEIGHTS_FILES), None,
                         f"a path for the {what} weights ({' or '.join(WEIGHTS_FILES)})", "none given")
    return paths


def model_dir(files: Mapping[str, str | Path], dest: Path, required: Sequence[str] = REQUIRED_FILES,
              what: str = "Marian") -> Path:
    """Lay ``files`` (file name -> path) out in ``dest`` under their names, the way
    ``from_pretrained`` expects a model directory, and return ``dest``. ``required``: the files
    besides the weights (one of ``WEIGHTS_FILES``) that the model kind needs.

    Symbolic links to the absolute paths: free for a model of hundreds of MB, they work across
    file systems (a temporary directory rarely shares one with the download folder), and
    ``from_pretrained`` follows them (the Hugging Face cache is itself a tree of symlinks)."""
    paths = _check_files(files, required, what)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for name, path in paths.items():
        link = dest / name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(path.resolve())
    return dest


def model_name(directory: Path) -> str | None:
    """The checkpoint's original name as its config.json records it (``from_pretrained``
    overwrites it with the local path)."""
    config = json.loads((Path(directory) / "config.json").read_text(encoding="utf-8"))
    return config.get("_name_or_path") or config.get("name_or_path") or None


def load_translator(directory: Path, device: str = "cpu"):
    """``(tokenizer, model)`` from a local Marian directory, in eval mode; never touches the hub."""
    from transformers import MarianMTModel, MarianTokenizer

    tokenizer = MarianTokenizer.from_pretrained(str(directory), local_files_only=True)
    model = MarianMTModel.from_pretrained(str(directory), local_files_only=True)
    return tokenizer, model.to(device).eval()  # type: ignore[arg-type]  # transformers types .to unbound


# --- translation -------------------------------------------------------------------------------

def _length_batches(sentences: list[str], batch_size: int) -> list[list[int]]:
    """Indices of ``sentences`` in batches of similar length (longest first, so that running out
    of memory shows at once), which keeps padding and decoding time down."""
    order = sorted(range(len(sentences)), key=lambda i: -len(sentences[i]))
    return [order[k:k + batch_size] for k in range(0, len(order), batch_size)]


def translate(sentences: list[str], tokenizer, model, batch_size: int = 32, num_beams: int = 4,
              max_new_tokens: int = 256, device: str = "cpu", progress: bool = True) -> list[str]:
    """Translations of ``sentences``, output ``i`` for input ``i``, by beam search (no sampling,
    so a rerun gives the same text). An empty sentence is an error: its translation would be an
    empty line that shifts the line-aligned output."""
    import torch

    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    for i, sentence in enumerate(sentences):
        if not sentence.strip():
            raise ValueError(f"sentence {i} is empty: nothing to translate")
    out: dict[int, str] = {}
    with torch.inference_mode(), progress_bar(total=len(sentences), unit="sent", desc="fr->en",
                                              disable=not progress) as bar:
        for batch in _length_batches(sentences, batch_size):
            inputs = tokenizer([sentences[i] for i in batch], return_tensors="pt", padding=True).to(device)
            # max_length=None: opus-mt checkpoints set max_length=512, and with max_new_tokens also
            # given, generate would log a warning for every batch.
            generated = model.generate(**inputs, num_beams=num_beams, do_sample=False,
                                       max_new_tokens=max_new_tokens, max_length=None)
            # The output is target-language text: decode it with the target SentencePiece model.
            texts = tokenizer.batch_decode(generated, skip_special_tokens=True, use_source_tokenizer=False)
            for i, text in zip(batch, texts):
                out[i] = text
            bar.update(len(batch))
    return [out[i] for i in range(len(sentences))]


def _check_translations(texts: list[str], sources: list[str]) -> None:
    """Each translation must fill exactly one non-empty line (the output is line-aligned with the
    15-way rows, and the reader rejects empty lines)."""
    for i, (text, source) in enumerate(zip(texts, sources)):
        if not text.strip() or "\n" in text or "\r" in text:
            raise ValueError(f"row {i + 1}: the translation of {source!r} is not one non-empty line: {text!r}")


def run_backtranslation(way15_root: Path, pivot: str, n: int, files: Mapping[str, Path], out_txt: Path,
                        batch_size: int = 32, num_beams: int = 4, max_new_tokens: int = 256,
                        device: str = "cpu", log: Log | None = None) -> dict:
    """Translate the first ``n`` rows of the ``pivot`` column of XNLI-15way back into English and
    write one translation per line to ``out_txt`` (all or nothing). Returns a few statistics."""
    log = log or (lambda _m: None)
    start = time.monotonic()
    sentences = fifteen_way(way15_root, [pivot], n)[pivot]
    with tempfile.TemporaryDirectory(prefix="marian-") as tmp:
        directory = model_dir(files, Path(tmp) / "model")
        name = model_name(directory)
        log(f"back-translating {n} {pivot} rows of XNLI-15way with {name or 'the Marian model'} "
            f"(beam {num_beams}, batch {batch_size}, {device})")
        tokenizer, model = load_translator(directory, device)
        texts = translate(sentences, tokenizer, model, batch_size=batch_size, num_beams=num_beams,
                          max_new_tokens=max_new_tokens, device=device)
    _check_translations(texts, sentences)
    with atomic_write(out_txt) as fh:
        for text in texts:
            fh.write(text + "\n")
    seconds = round(time.monotonic() - start, 3)
    log(f"wrote {len(texts)} translations to {out_txt} in {seconds:.1f} s")
    return {"rows": len(texts), "pivot": pivot, "model": name, "seconds": seconds}
