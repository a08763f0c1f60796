"""Loading, validating and querying the pipeline configuration.

The config is data (config/config.yaml, overridden by e.g. config/demo.yaml); this module fills in
the schema's defaults (the one place they live), turns schema violations into one-line messages
that name the key and the allowed values, and offers the derived views the rules need (grid cells,
pair languages, job lists); Liu et al.'s section has its own module, ``xling.config.liu2020``, and
so do the external models of Section 5, ``xling.config.external``, and UD parsing's sources and
extra test sets, ``xling.config.parsing``. The stages read the config; the config imports none of
them.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import itertools
import json
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Mapping

import jsonschema
import yaml

from xling.config import external, liu2020, parsing
from xling.errors import ConfigError

# The checkout the package runs from (tests, benchmarks and the documentation's commands use it).
REPO = Path(__file__).resolve().parents[3]


def load_yaml(path: str | Path) -> dict:
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh) or {}


def merge(base: dict, override: dict) -> dict:
    """Recursive mapping merge, lists replaced whole: what Snakemake does with --configfile."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load(*paths: str | Path) -> dict:
    """Load and merge config files left to right, then fill in defaults and validate."""
    cfg: dict = {}
    for p in paths:
        cfg = merge(cfg, load_yaml(p))
    validate(cfg)
    return cfg


def _key_path(error: jsonschema.ValidationError) -> str:
    parts = [str(p) for p in error.absolute_path]
    return ".".join(parts) if parts else "<top level>"


def _describe(error: jsonschema.ValidationError) -> str:
    key = _key_path(error)
    if error.validator == "enum":
        allowed = ", ".join(repr(v) for v in error.validator_value)
        why = error.schema.get("description")
        return f"config key '{key}': {error.instance!r} is not allowed; allowed values: {allowed}" + (
            f" ({why})" if why else "")
    if error.validator == "additionalProperties":
        known = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(known))
        msg = f"config key '{key}': unknown key(s) {', '.join(map(repr, unknown))}"
        if known:
            msg += f"; allowed keys: {', '.join(known)}"
        return msg
    if error.validator == "required":
        return f"config key '{key}': {error.message}"
    if error.validator == "type":
        return (f"config key '{key}': {error.instance!r} has the wrong type; "
                f"expected {error.validator_value}")
    return f"config key '{key}': {error.message}"


@functools.cache
def _schema_text() -> str:
    return resources.files("xling").joinpath("config.schema.yaml").read_text(encoding="utf-8")


@functools.cache
def _parsed_schema() -> dict:
    # parsed once per process, by libyaml where PyYAML has it: the pure-Python parser took a tenth
    # of a dry run, four times over
    return yaml.load(_schema_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def schema() -> dict:
    """The config schema (package data; workflow/schemas/config.schema.yaml links to it), the
    caller's own copy."""
    return copy.deepcopy(_parsed_schema())


def fill_defaults(cfg: dict, _node_schema: dict | None = None, _root: dict | None = None) -> dict:
    """Write the schema's ``default`` of every absent optional key into ``cfg`` (in place, nested
    mappings too, and every row of a mapping such as ``settings``); returns ``cfg``."""
    root = _root if _root is not None else schema()
    s = _resolve(root, _node_schema if _node_schema is not None else root)
    if not isinstance(cfg, dict):
        return cfg
    props = s.get("properties", {})
    for key, sub in props.items():
        if key not in cfg:
            # a default may sit beside a $ref (e.g. {$ref: posint, default: 4}) or inside its target
            for candidate in (sub, _resolve(root, sub)):
                if "default" in candidate:
                    cfg[key] = copy.deepcopy(candidate["default"])
                    break
        if key in cfg:
            fill_defaults(cfg[key], sub, root)
    extra = s.get("additionalProperties")
    if isinstance(extra, dict):
        for key, value in cfg.items():
            if key not in props:
                fill_defaults(value, extra, root)
    return cfg


def section_defaults(*path: str) -> dict:
    """The schema's defaults of the section at ``path`` (``section_defaults("finetune",
    "grid_jobs")``): what a config that leaves it out gets."""
    root = schema()
    node = root
    for key in path:
        node = _resolve(root, node)["properties"][key]
    return fill_defaults({}, node, root)


def _resolve(root: dict, s: dict) -> dict:
    while isinstance(s, dict) and "$ref" in s:
        s = root["definitions"][s["$ref"].rsplit("/", 1)[1]]
    return s


def validate(cfg: dict) -> None:
    """Fill in the schema's defaults (in place), then raise ConfigError listing every schema
    violation (key path + what is allowed), then check the cross-references a schema cannot
    express."""
    fill_defaults(cfg)
    validator = jsonschema.Draft7Validator(schema())
    errors = sorted(validator.iter_errors(cfg), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(_describe(e) for e in errors))
    problems = list(_cross_check(cfg))
    if problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))


def _cross_check(cfg: Mapping[str, Any]) -> Iterable[str]:
    """What the schema cannot say: references between sections, one line each."""
    yield from _language_problems(cfg)
    yield from _source_problems(cfg)
    yield from _model_problems(cfg)
    yield from _analysis_problems(cfg)
    yield from liu2020.problems(cfg)
    yield from external.problems(cfg)
    yield from parsing.problems(cfg)


def _language_problems(cfg: Mapping[str, Any]) -> Iterable[str]:
    langs, src = cfg["languages"], cfg["source_language"]
    if src not in langs:
        yield f"config key 'source_language': {src!r} is not in languages ({', '.join(langs)})"
    for pair in cfg["pairs"]:
        for lang in pair.split("-"):
            if lang not in langs:
                yield f"config key 'pairs': language {lang!r} of pair {pair!r} is not in languages ({', '.join(langs)})"
        if pair.split("-")[0] != src:
            yield f"config key 'pairs': pair {pair!r} must start with the source language {src!r}"
    mono = cfg["monolingual"]["languages"]
    for lang in mono:
        if lang not in langs:
            yield f"config key 'monolingual.languages': {lang!r} is not in languages ({', '.join(langs)})"
    if mono and src not in mono:
        yield (f"config key 'monolingual.languages': the Section 5 analyses compare every model with the "
               f"source language's, so {src!r} must be among them")
    for pair, rows in (cfg.get("pair_rows") or {}).items():
        # a pair the run does not train may keep its entry (an overlay narrowing `pairs` cannot
        # delete it), but its languages must be the config's (a misspelt pair)
        yield from _foreign_pair(cfg, f"pair_rows.{pair}", pair)
        unknown = [r for r in rows if r not in cfg["settings"]]
        if unknown:
            yield (f"config key 'pair_rows.{pair}': no such Table 1 row {unknown[0]!r} "
                   f"(settings: {', '.join(cfg['settings'])})")
        elif "default" not in rows:
            yield f"config key 'pair_rows.{pair}': must train 'default', the row every Delta is taken against"
    first = pretrain_seed(cfg)
    for key, row, listed in _seed_lists(cfg):
        if row not in cfg["settings"]:
            yield f"config key '{key}': no such Table 1 row (settings: {', '.join(cfg['settings'])})"
        elif int(listed[0]) != first:
            yield (f"config key '{key}': must start with seeds.pretrain's first seed ({first}), the "
                   f"seed of the models trained once, got {listed[0]}")
    for pair in cfg["seeds"].get("pair_rows") or {}:
        yield from _foreign_pair(cfg, f"seeds.pair_rows.{pair}", pair)
    if cfg["monolingual"]["en_prime_seed"] == pretrain_seed(cfg):
        yield (f"config key 'monolingual.en_prime_seed': {cfg['monolingual']['en_prime_seed']} is the seed of "
               f"the other monolingual models (seeds.pretrain[0]); en′ must differ from en by its seed")


def _foreign_pair(cfg: Mapping[str, Any], key: str, pair: str) -> Iterable[str]:
    """A problem when ``pair`` (the entry under ``key``) is not two of the config's languages."""
    if any(lang not in cfg["languages"] for lang in pair.split("-")):
        yield f"config key '{key}': not a pair of the config's languages ({', '.join(cfg['languages'])})"


def _source_problems(cfg: Mapping[str, Any]) -> Iterable[str]:
    """Download ids the corpus and code-switching keys name: each must be an entry of ``downloads``;
    FreeDict code-switching needs each pair's dictionary from the source language."""
    downloads = cfg["downloads"]
    for lang, ids in cfg["preprocess"]["corpus_files"].items():
        if lang not in cfg["languages"]:
            yield f"config key 'preprocess.corpus_files.{lang}': {lang!r} is not in languages"
        missing = [rid for rid in ids if rid not in downloads]
        if missing:
            yield (f"config key 'preprocess.corpus_files.{lang}': no download entry {missing[0]!r} "
                   f"({len(missing)} of {len(ids)} ids missing from 'downloads')")
    cs = cfg["codeswitch"]
    if cs["dictionary"] == "freedict":
        switched = {p for p in cfg["pairs"] for s, row in cfg["settings"].items()
                    if row["codeswitch"] and trains(cfg, s, p)}
        for pair in sorted(switched):
            if pair not in cs["freedict"]:
                yield (f"config key 'codeswitch.freedict': no FreeDict dictionary {pair} for the code-switched rows of "
                       f"pair {pair} (codeswitch.dictionary: freedict)")


def _model_problems(cfg: Mapping[str, Any]) -> Iterable[str]:
    model, pretrain = cfg["model"], cfg["pretrain"]
    for name, s in cfg["settings"].items():
        yield from separation_problems(s["separate"], model["layers"], f"settings.{name}.separate")
    if "default" not in cfg["settings"]:
        yield "config key 'settings': a 'default' row is required (Table 1's Delta is relative to it)"
    window = pretrain.get("sentence_window")
    if window is not None and pretrain["sample_break_mode"] != "eos":
        yield ("config key 'pretrain.sentence_window': windows cut sentences, so they need "
               "pretrain.sample_break_mode: eos")
    if window is not None and window > model["tokens_per_sample"]:
        yield (f"config key 'pretrain.sentence_window': {window} exceeds "
               f"model.tokens_per_sample={model['tokens_per_sample']}")
    if model["dim"] % model["heads"]:
        yield f"config key 'model.heads': {model['heads']} does not divide model.dim={model['dim']}"


def _analysis_problems(cfg: Mapping[str, Any]) -> Iterable[str]:
    a, rows, downloads = cfg["analysis"], cfg["settings"], cfg["downloads"]
    yield from _random_encoder_seed_problems(cfg)
    for key, names in (("shared_space.settings", a.get("shared_space", {}).get("settings", [])),
                       ("bilingual_setting", [a["bilingual_setting"]]), ("prime_setting", [a.get("prime_setting")])):
        for name in names:
            if name is not None and name not in rows:
                yield f"config key 'analysis.{key}': {name!r} is not a row of settings ({', '.join(rows)})"
    if a["en_paraphrase"] is not None and a["en_paraphrase"] not in downloads:
        yield f"config key 'analysis.en_paraphrase': {a['en_paraphrase']!r} is not a key of downloads"
    bt = a.get("backtranslation")
    if bt is not None and a["en_paraphrase"] is not None:
        yield ("config key 'analysis.backtranslation': en′ comes either from a ready file "
               "(analysis.en_paraphrase) or from back-translation; set the other one to null")
    for rid in bt["model_files"] if bt is not None else []:
        if rid not in downloads:
            yield f"config key 'analysis.backtranslation.model_files': {rid!r} is not a key of downloads"
    # Figure 5's links are of 15-way rows whatever analysis.parallel says
    needed = ["xnli_15way"] if (a["parallel"] == "xnli_15way" and analysis_targets(cfg)) or figure5_pairs(cfg) else []
    needed += [rid for lang in analysis_targets(cfg) if not is_prime(lang) for rid in tatoeba_ids(lang)]
    yield from (f"config key 'downloads': the Section 5 analyses need an entry {rid!r}"
                for rid in needed if rid not in downloads)
    if a["parallel"] == "pud":
        yield from _pud_problems(cfg)
    yield from _figure4_problems(cfg)
    if figure5_pairs(cfg):
        too_deep = [i for i in a["transfer"]["layers"] if i > cfg["model"]["layers"]]
        if too_deep:
            yield (f"config key 'analysis.transfer.layers': {too_deep} exceed model.layers="
                   f"{cfg['model']['layers']} (layer 0 is the embeddings)")
        if "fast_align_src" not in downloads:
            yield "config key 'downloads': Figure 5's word alignment needs an entry 'fast_align_src'"


# UD v2.3's Parallel Universal Dependencies: the same sentences in every language (sent_id n01001011 ...)
PUD_SENTENCES = 1000


def _pud_problems(cfg: Mapping[str, Any]) -> Iterable[str]:
    """analysis.parallel: pud: no row count above what PUD holds, no en′ (it paraphrases 15-way
    rows), and a PUD download for every language Section 5 reads."""
    a, downloads = cfg["analysis"], cfg["downloads"]
    for key, rows in (("align_sentences", a["align_sentences"]), ("cka_sentences", a["cka_sentences"]),
                      ("shared_space.rows", a["shared_space"]["rows"])):
        if rows > PUD_SENTENCES:
            yield (f"config key 'analysis.{key}': {rows} rows, but analysis.parallel: pud has {PUD_SENTENCES} "
                   f"parallel sentences (UD PUD); at most {PUD_SENTENCES}")
    if en_prime_source(cfg) is not None:
        yield ("config key 'analysis.parallel': pud has no en′ (analysis.en_paraphrase and "
               "analysis.backtranslation paraphrase XNLI-15way rows); set both to null")
    langs = parallel_languages(cfg)
    for lang in langs:
        rid = a["pud"].get(lang)
        if rid is None:
            yield (f"config key 'analysis.pud': no download id for {lang!r}; analysis.parallel: pud reads the "
                   f"PUD treebank of every Section 5 language ({', '.join(langs)})")
        elif rid not in downloads:
            yield f"config key 'analysis.pud.{lang}': {rid!r} is not a key of downloads"


def _figure4_problems(cfg: Mapping[str, Any]) -> Iterable[str]:
    """FreeDict's dictionaries are downloads; with analysis.words.dictionary: freedict, Figure 4
    needs one pair at least (targets without a dictionary are left out: figure4_unavailable)."""
    for direction, rid in cfg["codeswitch"]["freedict"].items():
        if rid not in cfg["downloads"]:
            yield f"config key 'codeswitch.freedict.{direction}': {rid!r} is not a key of downloads"
    unavailable = figure4_unavailable(cfg)
    if unavailable and not figure4_targets(cfg):
        src = cfg["source_language"]
        yield (f"config key 'codeswitch.freedict': analysis.words.dictionary: freedict, but no FreeDict "
               f"dictionary from {src} to a Section 5 language ({', '.join(f'{src}-{t}' for t in unavailable)}); "
               f"Figure 4 would have no pair")


def separation_problems(separate: Mapping, layers: int, where: str = "separate") -> list[str]:
    """What is wrong with a row's ``separate:`` (at config key ``where``) for a model of ``layers``
    layers: separate positions need separate token embeddings, and one layer at least is shared."""
    out = []
    if separate.get("positions") and not separate["embeddings"]:
        out.append(f"config key '{where}.positions': separate positional embeddings need separate token "
                   f"embeddings (separate.embeddings: true)")
    if not 0 <= separate["layers"] < layers:
        out.append(f"config key '{where}.layers': {separate['layers']} separate layers leaves no shared layer "
                   f"of model.layers={layers}")
    return out


@functools.cache
def _section_validator(name: str) -> jsonschema.Draft7Validator:
    root = schema()
    section = dict(_resolve(root, root["properties"][name]), required=[], additionalProperties=True)
    return jsonschema.Draft7Validator({"type": "object", "properties": {name: section},
                                       "definitions": root["definitions"]})


def section_problems(name: str, section: Mapping) -> list[str]:
    """What is wrong with the values of a job's own copy of the top-level section ``name`` (the
    ``pretrain:`` a rule tracks, Liu et al.'s ``model:``), by the schema: keys it leaves out, and
    keys the schema does not know, are not errors here."""
    errors = _section_validator(name).iter_errors({name: dict(section)})
    return [_describe(e) for e in sorted(errors, key=lambda e: list(map(str, e.absolute_path)))]


# --------------------------------------------------------------------------------------------
# Derived views


def pair_langs(pair: str) -> tuple[str, str]:
    src, tgt = pair.split("-")
    return src, tgt


def target_languages(cfg: Mapping[str, Any]) -> list[str]:
    return [pair_langs(p)[1] for p in cfg["pairs"]]


def grid_cells(task_cfg: Mapping[str, Any]) -> list[dict[str, Any]]:
    """All hyperparameter combinations of a task's grid, in a stable order."""
    grid = task_cfg["grid"]
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def hp_id(cell: dict[str, Any]) -> str:
    """A short readable id for a grid cell, usable as a path component: bs8_elr2.5e-06_clr2.5e-05."""
    abbrev = {"batch_size": "bs", "lr": "lr", "encoder_lr": "elr", "classifier_lr": "clr"}
    return "_".join(f"{abbrev.get(k, k)}{v:g}" if isinstance(v, float) else f"{abbrev.get(k, k)}{v}"
                    for k, v in cell.items())


def cell_from_id(task_cfg: Mapping[str, Any], ident: str) -> dict[str, Any]:
    for cell in grid_cells(task_cfg):
        if hp_id(cell) == ident:
            return cell
    raise ConfigError(f"no grid cell {ident!r} in {[hp_id(c) for c in grid_cells(task_cfg)]}")


PRIME = "_prime"  # en_prime: English again (another seed, or the en′ side of Figure 7)


def prime(lang: str) -> str:
    return f"{lang}{PRIME}"


def is_prime(name: str) -> bool:
    return name.endswith(PRIME)


def data_language(name: str) -> str:
    """The language whose data a model name or language id reads: en_prime reads English."""
    return name.removesuffix(PRIME)


def monolingual_models(cfg: Mapping[str, Any]) -> list[str]:
    """Section 5's monolingual models: one per language plus en_prime (English, another seed: the
    model that reads en′ in Figure 7, so none without en′ sentences)."""
    models = list(cfg["monolingual"]["languages"])
    if cfg["source_language"] in models and en_prime_source(cfg) is not None:
        models.append(prime(cfg["source_language"]))
    return models


def en_prime_source(cfg: Mapping[str, Any]) -> str | None:
    """Where Figure 7's en′ sentences come from: 'download' (a ready line-aligned file,
    analysis.en_paraphrase), 'backtranslation' (analysis.backtranslation), or None (no en′)."""
    a = cfg["analysis"]
    if a.get("en_paraphrase") is not None:
        return "download"
    if a.get("backtranslation") is not None:
        return "backtranslation"
    return None


def figure7_pairs(cfg: Mapping[str, Any]) -> list[str]:
    """The en-X pairs whose bilingual model Figure 7 compares (every Section 5 language, en-de
    included although Table 1 has no en-de row), plus en-en_prime when en′ exists."""
    a, src = cfg["analysis"], cfg["source_language"]
    if a.get("bilingual_setting") is None:
        return []
    pairs = [f"{src}-{lang}" for lang in cfg["monolingual"]["languages"] if lang != src]
    if en_prime_source(cfg) is not None and a.get("prime_setting") is not None:
        pairs.insert(0, f"{src}-{prime(src)}")
    return pairs


def pretrain_seed(cfg: Mapping[str, Any]) -> int:
    """The seed of every model pretrained once (Section 5's), the first of Table 1's."""
    return int(cfg["seeds"]["pretrain"][0])


def monolingual_seed(cfg: Mapping[str, Any], mono: str) -> int:
    """The seed a monolingual model of Section 5 trains with: en′ its own, the others the first
    pretraining seed."""
    return int(cfg["monolingual"]["en_prime_seed"]) if is_prime(mono) else pretrain_seed(cfg)


def trains(cfg: Mapping[str, Any], setting: str, pair: str) -> bool:
    """Whether Table 1's row ``setting`` is trained on ``pair`` (``pair_rows``; every row by default)."""
    rows = (cfg.get("pair_rows") or {}).get(pair)
    return rows is None or setting in rows


def row_seeds(cfg: Mapping[str, Any], setting: str, pair: str | None = None) -> list[int]:
    """The pretraining seeds of a Table 1 row (on ``pair``): ``seeds.pair_rows``' list for the row on
    that pair, else ``seeds.rows``' for the row, else ``seeds.pretrain``. Without a pair: the most
    any pair trains."""
    seeds = cfg["seeds"]
    if pair is None:
        lists = [row_seeds(cfg, setting, p) for p in cfg["pairs"]]
        return max(lists, key=len) if lists else row_seeds(cfg, setting, "")
    listed = ((seeds.get("pair_rows") or {}).get(pair) or {}).get(setting)
    return [int(s) for s in listed or (seeds.get("rows") or {}).get(setting) or seeds["pretrain"]]


def _seed_lists(cfg: Mapping[str, Any]) -> Iterable[tuple[str, str, list]]:
    """(config key, row, seeds) of every per-row seed list (seeds.rows, seeds.pair_rows)."""
    for row, listed in (cfg["seeds"].get("rows") or {}).items():
        yield f"seeds.rows.{row}", row, listed
    for pair, rows in (cfg["seeds"].get("pair_rows") or {}).items():
        for row, listed in rows.items():
            yield f"seeds.pair_rows.{pair}.{row}", row, listed


def training_seeds(cfg: Mapping[str, Any]) -> dict[str, int]:
    """Every seed a pretrained model of the run starts from, by the config key that sets it."""
    seeds = {f"seeds.pretrain[{i}]": int(s) for i, s in enumerate(cfg["seeds"]["pretrain"])}
    for key, _, listed in _seed_lists(cfg):
        seeds.update({f"{key}[{i}]": int(s) for i, s in enumerate(listed)})
    seeds["monolingual.en_prime_seed"] = int(cfg["monolingual"]["en_prime_seed"])
    return seeds


def _random_encoder_seed_problems(cfg: Mapping[str, Any]) -> Iterable[str]:
    """Figure 7's random encoder is initialised as the models are (fairseq seeds torch right
    before it builds a model): with a training seed it would be that model at update 0."""
    seed = int(cfg["analysis"]["random_seed"])
    keys = [key for key, s in training_seeds(cfg).items() if s == seed]
    if keys:
        yield (f"config key 'analysis.random_seed': {seed} is also {' and '.join(keys)}, a seed models train "
               f"with; Figure 7's random encoder would be such a model's initial weights. Pick a seed no "
               f"model trains with")


def finetune_seed(cfg: Mapping[str, Any]) -> int:
    """The seed of every task model trained once (Figure 5's), the first of Table 1's."""
    return int(cfg["seeds"]["finetune"][0])


def bilingual_models(cfg: Mapping[str, Any]) -> list[tuple[str, str, int]]:
    """(setting, pair, seed) of every bilingual pretraining job: Table 1's settings x pairs (those
    :func:`trains`) x each row's pretraining seeds (:func:`row_seeds`), then Figure 7's bilingual
    models that Table 1 does not train (en-de; en-en_prime with analysis.prime_setting's parameter
    sharing), once, with the first seed."""
    seeds = [int(x) for x in cfg["seeds"]["pretrain"]]
    out = [(s, p, seed) for s in cfg["settings"] for p in cfg["pairs"] if trains(cfg, s, p)
           for seed in row_seeds(cfg, s, p)]
    a = cfg["analysis"]
    for pair in figure7_pairs(cfg):
        setting = a["prime_setting"] if is_prime(pair) else a["bilingual_setting"]
        if (setting, pair, seeds[0]) not in out:
            out.append((setting, pair, seeds[0]))
    return out


def language_embedding_twins(cfg: Mapping[str, Any]) -> dict[str, str]:
    """Table 1 rows and their twin that differs from them only in language embeddings (its label
    and its own ``language_embeddings``, set against ``model.language_embeddings``): ``{row: twin}``,
    for the finding that compares the two (config/demo_full_langemb.yaml)."""
    default = bool(cfg["model"]["language_embeddings"])

    def rest(row: dict) -> dict:
        return {k: v for k, v in row.items() if k not in ("label", "language_embeddings")}

    twins = {}
    for twin, row in cfg["settings"].items():
        if bool(row.get("language_embeddings", default)) == default:
            continue
        base = next((s for s, r in cfg["settings"].items() if s != twin and rest(r) == rest(row)
                     and bool(r.get("language_embeddings", default)) == default), None)
        if base is not None and base not in twins:
            twins[base] = twin
    return twins


def data_pairs(cfg: Mapping[str, Any]) -> list[str]:
    """Pairs whose BPE and binarised data the workflow builds (en-en_prime reuses the
    monolingual English data instead)."""
    return list(dict.fromkeys(p for _, p, _ in bilingual_models(cfg) if not is_prime(p)))


def digest(obj: Any) -> str:
    """Stable short hash of a JSON-able value (used to rerun a job when its parameters change)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:12]


def figure5_pairs(cfg: Mapping[str, Any]) -> list[str]:
    """The Table 1 pairs Figure 5 transfers to: each needs its monolingual target model and the
    bilingual model of ``analysis.bilingual_setting``; none when ``analysis.transfer.tasks`` is empty."""
    a = cfg["analysis"]
    if not a["transfer"]["tasks"] or a.get("bilingual_setting") is None:
        return []
    mono = set(cfg["monolingual"]["languages"])
    return [p for p in cfg["pairs"] if set(pair_langs(p)) <= mono]


def analysis_targets(cfg: Mapping[str, Any]) -> list[str]:
    """Languages the source is compared with in Figures 6-7: each other monolingual model's
    language, and ``<src>_prime`` (en') when en′ sentences are configured (Figure 7 only)."""
    src = cfg["source_language"]
    out = [lang for lang in cfg["monolingual"]["languages"] if lang != src]
    if en_prime_source(cfg) is not None:
        out.insert(0, prime(src))
    return out


def retrieval_targets(cfg: Mapping[str, Any]) -> list[str]:
    """Figure 6's (and Figure 4's) languages: the analysis targets but en′, which Tatoeba has not."""
    return [lang for lang in analysis_targets(cfg) if not is_prime(lang)]


def parallel_languages(cfg: Mapping[str, Any]) -> list[str]:
    """The languages whose parallel rows (analysis.parallel) Section 5 reads: the source language
    and Figures 6-7's targets (en′ reads English), the shared-space models' and the external rows'."""
    a, src = cfg["analysis"], cfg["source_language"]
    langs = [src, *(data_language(t) for t in analysis_targets(cfg))]
    langs += [lang for s in a["shared_space"]["settings"] if s in cfg["settings"] for p in cfg["pairs"]
              for lang in pair_langs(p)]
    langs += [t for _, t in external.jobs(cfg)]
    return list(dict.fromkeys(langs))


def figure4_unavailable(cfg: Mapping[str, Any]) -> dict[str, str]:
    """Figure 4's targets left out of the run, and why: with analysis.words.dictionary: freedict,
    those that codeswitch.freedict gives no dictionary from the source language."""
    if cfg["analysis"]["words"]["dictionary"] != "freedict":
        return {}
    src, dictionaries = cfg["source_language"], cfg["codeswitch"]["freedict"]
    return {t: f"codeswitch.freedict has no {src}-{t} dictionary (analysis.words.dictionary: freedict)"
            for t in retrieval_targets(cfg) if f"{src}-{t}" not in dictionaries}


def figure4_targets(cfg: Mapping[str, Any]) -> list[str]:
    """The languages Figure 4 translates words into from the source language."""
    unavailable = figure4_unavailable(cfg)
    return [t for t in retrieval_targets(cfg) if t not in unavailable]


# Paper codes -> the ISO 639-3 codes in Tatoeba file names (and in their download ids).
TATOEBA_CODES = {"fr": "fra", "de": "deu", "ru": "rus", "zh": "cmn"}


def tatoeba_ids(lang: str) -> tuple[str, str]:
    """Download ids of the Tatoeba (foreign, English) files for a paper language code."""
    code = TATOEBA_CODES.get(lang, lang)
    return f"tatoeba_{code}", f"tatoeba_{code}_eng"
