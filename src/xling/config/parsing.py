"""UD parsing's data as the config describes it: where each treebank's splits come from (the UD
archive, ``downloads.ud``, or single-file downloads, ``taskdata.ud_files``), which task files a
language gets, the extra zero-shot test sets (``finetune.parsing.extra_tests``) and their report
tables, and the cross-field checks of these keys (called by :func:`xling.config.validate`). Pure
functions of the validated config, below :mod:`xling.config`: nothing here imports the rest of
the package."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

SPLITS = ("train", "dev", "test")  # a language's task files, R/tasks/parsing/<lang>/<split>.conllu
EXTRA_SPLIT = "test"  # the UD split an extra test set reads
ARCHIVE = "ud"  # the downloads key of the UD archive


def treebank(cfg: Mapping[str, Any], lang: str) -> str:
    return cfg["finetune"]["parsing"]["treebanks"][lang]


def from_files(cfg: Mapping[str, Any], name: str) -> bool:
    """Whether treebank ``name`` is read from single-file downloads (else from the archive)."""
    return name in cfg["taskdata"]["ud_files"]


def split_download(cfg: Mapping[str, Any], name: str, ud_split: str) -> str:
    """The downloads key of treebank ``name``'s ``ud_split`` file (a treebank of ``ud_files``)."""
    return cfg["taskdata"]["ud_files"][name][ud_split]


def task_splits(cfg: Mapping[str, Any], lang: str) -> list[str]:
    """The task files ``lang`` gets: every split from the archive; from single files, the splits
    whose UD file (``taskdata.ud_splits``) its treebank lists (a target without train: no train)."""
    name = treebank(cfg, lang)
    if not from_files(cfg, name):
        return list(SPLITS)
    listed, ud_splits = cfg["taskdata"]["ud_files"][name], cfg["taskdata"]["ud_splits"]
    return [s for s in SPLITS if ud_splits[s] in listed]


def archive_languages(cfg: Mapping[str, Any]) -> list[str]:
    """The languages whose treebank comes from the UD archive, in ``treebanks`` order."""
    return [lang for lang, name in cfg["finetune"]["parsing"]["treebanks"].items() if not from_files(cfg, name)]


def file_languages(cfg: Mapping[str, Any]) -> list[str]:
    """The languages whose treebank comes from single-file downloads, in ``treebanks`` order."""
    return [lang for lang, name in cfg["finetune"]["parsing"]["treebanks"].items() if from_files(cfg, name)]


def scored_languages(cfg: Mapping[str, Any]) -> list[str]:
    """The languages a fine-tuning job reads: the source, then each pair's target."""
    return [cfg["source_language"], *(p.split("-")[1] for p in cfg["pairs"])]


def extra_tests(cfg: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """name -> {language: treebank} of the extra test sets, in the languages the run's jobs read (a
    set may list more, as ``treebanks`` does: an overlay with fewer pairs leaves them out); {} unless
    parsing is fine-tuned."""
    if "parsing" not in cfg["finetune"]["tasks"]:
        return {}
    read = scored_languages(cfg)
    out = {name: {lang: tb for lang, tb in langs.items() if lang in read}
           for name, langs in cfg["finetune"]["parsing"]["extra_tests"].items()}
    return {name: langs for name, langs in out.items() if langs}


def extra_tables(cfg: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The report's tables of the extra test sets: table name -> ``test`` (the set's name), ``langs``
    (its treebanks the table shows), ``score`` (the result.json key it reads), ``pairs`` and
    ``columns`` (None: a column per pair's target, as Table 1; else a name per pair). Table
    ``<name>`` has the pairs whose target has the set; where the source language has it too,
    table ``<name>_<source>`` has every pair's model on the source's set, a column a pair."""
    src, pairs = cfg["source_language"], list(cfg["pairs"])
    out: dict[str, dict[str, Any]] = {}
    for name, langs in extra_tests(cfg).items():
        scored = [p for p in pairs if p.split("-")[1] in langs]
        if scored:
            used = {p.split("-")[1]: langs[p.split("-")[1]] for p in scored}
            out[name] = {"test": name, "langs": used, "score": f"tgt_extra.{name}", "pairs": scored, "columns": None}
        if src in langs:
            out[f"{name}_{src}"] = {"test": name, "langs": {src: langs[src]}, "score": f"src_extra.{name}",
                                    "pairs": pairs, "columns": pairs}
    return out


def problems(cfg: Mapping[str, Any]) -> Iterable[str]:
    """What the schema cannot say about UD's sources and the extra test sets, one line each."""
    downloads, files = cfg["downloads"], cfg["taskdata"]["ud_files"]
    for name, listed in files.items():
        for ud_split, rid in listed.items():
            if rid not in downloads:
                yield f"config key 'taskdata.ud_files.{name}.{ud_split}': {rid!r} is not a key of downloads"
    extra = cfg["finetune"]["parsing"]["extra_tests"]
    if "parsing" not in cfg["finetune"]["tasks"]:
        if extra:
            yield "config key 'finetune.parsing.extra_tests': test sets of parsing, which is not in finetune.tasks"
        return
    src, *targets = scored_languages(cfg)
    treebanks, ud_splits = cfg["finetune"]["parsing"]["treebanks"], cfg["taskdata"]["ud_splits"]
    from_archive = []
    needs = {src: ("the source language", ("train", "dev"))}
    needs.update({t: ("a target language", ("dev", "test")) for t in targets})
    for lang, (role, splits) in needs.items():
        name = treebanks.get(lang)
        if name is None:
            yield f"config key 'finetune.parsing.treebanks': no treebank for {lang!r}, {role}"
        elif name not in files:
            from_archive.append(name)
        else:
            for split in splits:
                if ud_splits[split] not in files[name]:
                    yield (f"config key 'taskdata.ud_files.{name}': {lang!r} is {role}, whose fine-tuning jobs read "
                           f"its {split} split: list a download for UD split {ud_splits[split]!r} (taskdata.ud_splits."
                           f"{split}); listed: {', '.join(files[name])}")
    for test in extra:
        if test in SPLITS:
            yield (f"config key 'finetune.parsing.extra_tests.{test}': a test set may not be named as a split "
                   f"({', '.join(SPLITS)}): its task file would be that split's")
    for test, langs in extra_tests(cfg).items():
        for name in langs.values():
            if name not in files:
                from_archive.append(name)
            elif EXTRA_SPLIT not in files[name]:
                yield (f"config key 'taskdata.ud_files.{name}': the extra test set {test!r} reads its "
                       f"{EXTRA_SPLIT} split; listed: {', '.join(files[name])}")
    if from_archive and ARCHIVE not in downloads:
        yield (f"config key 'downloads': {', '.join(dict.fromkeys(from_archive))} come from the UD archive "
               f"(they are not in taskdata.ud_files), which needs an entry {ARCHIVE!r}")
