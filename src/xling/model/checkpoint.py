"""Load a pretrained checkpoint as an encoder giving every layer's hidden states
(the contract of docs/ARCHITECTURE.md, used by fine-tuning and analysis). Imports no fairseq:
the checkpoint holds plain tensors and an argparse Namespace, the dictionary is a text file."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from xling.errors import InputError
from xling.pretrain.dictionary import TokenDictionary
from xling.pretrain.encoder import MODEL_NAME, MLMEncoder, check_model_args, padded_rows


class LoadedEncoder(nn.Module):
    """A pretrained encoder with its language-specific parts selected per call.

    Token ids follow ``dictionary`` (the shared ``dict.txt`` plus ``<mask>``); sequences
    should start with ``dictionary.bos()`` as the pretraining streams did."""

    def __init__(self, encoder: MLMEncoder, dictionary: TokenDictionary, languages: list[str]):
        super().__init__()
        self.encoder = encoder
        self.dictionary = dictionary
        self.languages = list(languages)
        self.num_layers = encoder.num_layers
        self.dim = encoder.dim

    def lang_id(self, lang: str) -> int:
        try:
            return self.languages.index(lang)
        except ValueError:
            raise KeyError(f"language {lang!r} not in this model's languages {self.languages}") from None

    def encode(self, tokens: torch.Tensor, lang: str, padding_mask: torch.Tensor | None = None) -> list[torch.Tensor]:
        """1 + num_layers tensors [B, T, D]: the embedding output (L0), then each layer."""
        _, states = self.encoder.extract_features(tokens, self.lang_id(lang), padding_mask=padding_mask,
                                                  return_all_hiddens=True)
        return states

    def forward(self, tokens, lang, padding_mask=None):
        return self.encode(tokens, lang, padding_mask)

    def language_specific_parameters(self, lang: str) -> list[nn.Parameter]:
        return self.encoder.language_specific_parameters(self.lang_id(lang))

    def shared_parameters(self) -> list[nn.Parameter]:
        """Parameters every language uses (the MLM output head included)."""
        return self.encoder.shared_parameters()


def load_encoder(
    checkpoint: str | Path, dictionary: str | Path | None = None, random_init_seed: int | None = None
) -> LoadedEncoder:
    """Rebuild the encoder of a fairseq checkpoint of the ``xling_mlm`` model on CPU.

    ``dictionary``: the ``dict.txt`` of pretraining; default: the one in the checkpoint's data path.
    ``random_init_seed``: the same architecture and dictionary, freshly initialised with this seed
    instead of the trained weights (Figure 7's random-encoder baseline)."""
    checkpoint = Path(checkpoint)
    return _encoder(checkpoint, _read(checkpoint), dictionary, random_init_seed)


def _read(checkpoint: Path) -> dict:
    # our own file, written by fairseq: full unpickling is needed for its argparse config
    return torch.load(checkpoint, map_location="cpu", weights_only=False)


def _encoder(checkpoint: Path, state: dict, dictionary: str | Path | None,
             random_init_seed: int | None) -> LoadedEncoder:
    """:func:`load_encoder` from the checkpoint's loaded ``state`` (``checkpoint`` names it in errors)."""
    cfg = state.get("cfg") or {}
    margs, targs = cfg.get("model"), cfg.get("task")
    if margs is None or targs is None or getattr(margs, "_name", getattr(margs, "arch", None)) != MODEL_NAME:
        raise InputError(checkpoint, None, f"a fairseq checkpoint of the {MODEL_NAME} model")
    try:
        check_model_args(margs)
    except ValueError as err:
        raise InputError(checkpoint, None, f"a checkpoint of this pipeline's {MODEL_NAME}; {err}") from None
    dict_path = Path(dictionary) if dictionary is not None else Path(targs.data.split(":")[0]) / "dict.txt"
    if not dict_path.exists():
        raise InputError(dict_path, None, "the dict.txt the model was pretrained with")
    vocab = TokenDictionary.load(dict_path)
    vocab.add_symbol("<mask>")  # as the task does
    languages = [lang for lang in targs.languages.split(",") if lang]
    weights = state["model"]
    vocab_masks = weights.get("encoder.vocab_mask")
    # the tables have a row per entry, padded to a multiple of --vocab-multiple
    rows = padded_rows(len(vocab), margs.vocab_multiple)
    if weights["encoder.lm_bias"].numel() != rows:
        raise InputError(dict_path, None, f"the dictionary of {checkpoint.name} ({weights['encoder.lm_bias'].numel()} "
                         f"table rows: its entries with <mask>, padded to a multiple of {margs.vocab_multiple})",
                         f"{len(vocab)} entries with <mask>, {rows} rows")
    if random_init_seed is not None:
        torch.manual_seed(random_init_seed)  # the model's own initialisation (its --param-init), seeded
    encoder = MLMEncoder(margs, len(vocab), vocab.pad(), len(languages), vocab_masks)
    if random_init_seed is None:
        encoder.load_state_dict({k.removeprefix("encoder."): v for k, v in weights.items()}, strict=True)
    encoder.eval()
    return LoadedEncoder(encoder, vocab, languages)


def training_seed(checkpoint: str | Path) -> int | None:
    """The ``--seed`` a fairseq checkpoint was trained with (None where its config has none)."""
    return _seed(_read(Path(checkpoint)))


def _seed(state: dict) -> int | None:
    common = (state.get("cfg") or {}).get("common")  # a dict in fairseq's checkpoints
    seed = common.get("seed") if isinstance(common, dict) else getattr(common, "seed", None)
    return None if seed is None else int(seed)


def distance_from_initial_weights(checkpoint: str | Path, dictionary: str | Path | None = None) -> float | None:
    """||w - w0|| / ||w0|| over the encoder's parameters: how far training moved the model from
    the weights it started from. fairseq-train seeds torch right before it builds the model, so
    ``w0`` is the same architecture initialised with the checkpoint's seed (``load_encoder``'s
    ``random_init_seed``). None for a checkpoint that does not record its seed."""
    checkpoint = Path(checkpoint)
    state = _read(checkpoint)  # read once for the seed, the trained weights and the start
    seed = _seed(state)
    if seed is None:
        return None
    trained = _encoder(checkpoint, state, dictionary, None).encoder
    start = dict(_encoder(checkpoint, state, dictionary, seed).encoder.named_parameters())
    moved = total = 0.0
    for name, w in trained.named_parameters():
        w0 = start[name].detach().double()
        moved += float(((w.detach().double() - w0) ** 2).sum())
        total += float((w0 ** 2).sum())
    return (moved / total) ** 0.5
