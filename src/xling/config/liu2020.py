"""Liu et al. 2020 as the config describes it (``liu2020:``): the study's languages, sizes and
context windows, its model and pretraining sections over the pipeline's, the XNLI cell, and the
cross-field checks of the section (called by :func:`xling.config.validate`). Pure functions of
the validated config, below :mod:`xling.config`: nothing here imports the rest of the package."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

FULL = "full"


def languages(cfg: Mapping[str, Any]) -> list[str]:
    """The study's languages, the source language first ([] when the study is off)."""
    langs = list(cfg["liu2020"]["languages"])
    if not langs:
        return []
    src = cfg["source_language"]
    return [src] + [lang for lang in langs if lang != src]


def retrieval_languages(cfg: Mapping[str, Any]) -> list[str]:
    """The languages whose words are retrieved from the source language's."""
    chosen = cfg["liu2020"]["retrieval"]["languages"]
    return list(chosen) if chosen is not None else languages(cfg)[1:]


def dictionary_id(cfg: Mapping[str, Any], lang: str) -> str:
    """The downloads key of the MUSE dictionary between the source language and ``lang``."""
    return f"muse_{cfg['source_language']}_{lang}_{cfg['liu2020']['retrieval']['dictionary']}"


def window_id(window: str | int) -> str:
    """A window's name in paths: ``full`` or ``w<tokens>``."""
    return FULL if window == FULL else f"w{int(window)}"


def window_ids(cfg: Mapping[str, Any]) -> list[str]:
    return [window_id(w) for w in cfg["liu2020"]["windows"]]


def model_section(cfg: Mapping[str, Any]) -> dict:
    """``model`` with the study's own values (liu2020.model) over it."""
    return {**cfg["model"], **cfg["liu2020"]["model"]}


def pretrain_section(cfg: Mapping[str, Any], wid: str) -> dict:
    """``pretrain`` (with liu2020.pretrain over it) of one context window: ``full`` keeps it as it
    is; ``w<N>`` cuts every sentence into samples of at most N tokens (one sentence per sample, no
    token dropped) and, unless ``liu2020.window_tokens`` is ``none``, is given as many tokens as
    the full model of its data (``match_tokens``: by samples per update or by updates, measured on
    the data when the job starts; :mod:`xling.pretrain.tokens`)."""
    p = {**cfg["pretrain"], **cfg["liu2020"]["pretrain"]}
    if wid != FULL:
        by = cfg["liu2020"]["window_tokens"]
        match = {"by": by, "sample_break_mode": p["sample_break_mode"]} if by != "none" else None
        p.update(sample_break_mode="eos", sentence_window=int(wid[1:]), match_tokens=match)
    return p


def xnli_freeze(cfg: Mapping[str, Any]) -> int:
    """Lower layers XNLI fine-tuning keeps fixed (and the layer the shift is added at)."""
    chosen = cfg["liu2020"]["xnli"]["freeze_layers"]
    return int(chosen) if chosen is not None else model_section(cfg)["layers"] // 2


def xnli_hp(cfg: Mapping[str, Any]) -> dict:
    """The XNLI cell the study's models are fine-tuned with: liu2020.xnli.hp, else the first cell
    of finetune.xnli's grid (the first value of each of its lists)."""
    chosen = cfg["liu2020"]["xnli"]["hp"]
    if chosen is not None:
        return dict(chosen)
    return {k: values[0] for k, values in cfg["finetune"]["xnli"]["grid"].items()}


def translation_layers(cfg: Mapping[str, Any]) -> list[int]:
    """The layers token translation shifts (1..L unless chosen)."""
    chosen = cfg["liu2020"]["translation"]["layers"]
    return list(chosen) if chosen is not None else list(range(1, model_section(cfg)["layers"] + 1))


def directions(cfg: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Token translation's directions: source -> x, then x -> source, for each translation language."""
    src, langs = cfg["source_language"], cfg["liu2020"]["translation"]["languages"]
    return [(src, l) for l in langs] + [(l, src) for l in langs]


def problems(cfg: Mapping[str, Any]) -> Iterable[str]:
    """What is wrong with the liu2020 section beyond what the schema says (one line each)."""
    liu = cfg["liu2020"]
    if not liu["languages"]:
        return
    langs = cfg["languages"]
    for lang in liu["languages"]:
        if lang not in langs:
            yield f"config key 'liu2020.languages': {lang!r} is not in languages ({', '.join(langs)})"
    if cfg["source_language"] not in liu["languages"] or len(liu["languages"]) < 2:
        yield (f"config key 'liu2020.languages': the source language {cfg['source_language']!r} and at "
               f"least one other are needed (words are retrieved between them)")
    for lang in retrieval_languages(cfg):
        if lang not in liu["languages"]:
            yield f"config key 'liu2020.retrieval.languages': {lang!r} is not in liu2020.languages"
        rid = dictionary_id(cfg, lang)
        if rid not in cfg["downloads"]:
            yield f"config key 'downloads': Liu et al.'s word retrieval needs an entry {rid!r}"
    tr = liu["translation"]
    for lang in tr["languages"]:
        if lang not in liu["languages"] or lang == cfg["source_language"]:
            yield (f"config key 'liu2020.translation.languages': {lang!r} is not one of liu2020.languages "
                   f"other than the source language")
    if tr["languages"] and "xnli_15way" not in cfg["downloads"]:
        yield "config key 'downloads': Liu et al.'s token translation needs an entry 'xnli_15way'"
    fig = tr["figure_direction"].split("-")
    if tr["languages"] and (cfg["source_language"] not in fig or not set(fig) & set(tr["languages"])):
        yield (f"config key 'liu2020.translation.figure_direction': {tr['figure_direction']!r} is not a "
               f"direction between {cfg['source_language']!r} and liu2020.translation.languages")
    for rid in (liu.get("mbert") or {}).get("model_files", []):
        if rid not in cfg["downloads"]:
            yield f"config key 'liu2020.mbert.model_files': {rid!r} is not a key of downloads"
    if liu.get("mbert") and not tr["languages"]:
        yield "config key 'liu2020.mbert': m-BERT's token translation needs liu2020.translation.languages"
    model = model_section(cfg)
    if xnli_freeze(cfg) >= model["layers"]:
        yield (f"config key 'liu2020.xnli.freeze_layers': {xnli_freeze(cfg)} leaves none of the model's "
               f"{model['layers']} layers to fine-tune")
    hp = xnli_hp(cfg)
    if set(hp) != {"batch_size", "encoder_lr", "classifier_lr"}:
        yield (f"config key 'liu2020.xnli.hp': {sorted(hp)} should be batch_size, encoder_lr and classifier_lr "
               f"(XNLI's two learning rates)")
    if model["dim"] % model["heads"]:
        yield f"config key 'liu2020.model.heads': {model['heads']} does not divide dim={model['dim']}"
    too_deep = [l for l in tr["layers"] or [] if l > model["layers"]]
    if too_deep:
        yield f"config key 'liu2020.translation.layers': {too_deep} exceed the model's {model['layers']} layers"
    for w in liu["windows"]:
        if w != FULL and w > model["tokens_per_sample"]:
            yield (f"config key 'liu2020.windows': a window of {w} tokens exceeds the model's "
                   f"tokens_per_sample={model['tokens_per_sample']}")
