"""The config schema stops typos and wrong types before any job, naming the key and allowed values."""

import copy

import pytest

from xling import config as xcfg
from xling.config import liu2020
from xling.errors import ConfigError
from xling.pretrain.job import ALL_SHARED, PretrainJob

PAPER = xcfg.load_yaml(xcfg.REPO / "config" / "config.yaml")
DEMO = xcfg.load_yaml(xcfg.REPO / "config" / "demo.yaml")


def broken(mutate):
    cfg = copy.deepcopy(PAPER)
    mutate(cfg)
    with pytest.raises(ConfigError) as info:
        xcfg.validate(cfg)
    return str(info.value)


def test_paper_and_demo_configs_validate():
    xcfg.validate(PAPER)
    merged = xcfg.merge(PAPER, DEMO)
    xcfg.validate(merged)
    assert merged["run_name"] == "demo"
    # demo overrides merge into the paper rows instead of replacing them
    assert merged["settings"]["sep_l1_6"]["separate"] == {"embeddings": False, "layers": 6}
    assert merged["settings"]["sep_l1_6"]["merges"] == DEMO["settings"]["sep_l1_6"]["merges"]


def test_paper_config_has_the_ten_table1_rows():
    labels = [s["label"] for s in PAPER["settings"].values()]
    assert labels == ["Default", "Wiki-CC", "No anchors", "Default anchors", "Extra anchors", "Sep Emb",
                      "Sep L1-3", "Sep L1-6", "Sep Emb + L1-3", "Sep Emb + L1-6"]
    assert PAPER["pairs"] == ["en-fr", "en-ru", "en-zh"]


def test_typo_in_enum_names_key_and_allowed_values():
    msg = broken(lambda c: c["settings"]["default"].update(bpe="jiont"))
    assert "settings.default.bpe" in msg
    assert "'jiont'" in msg and "'joint'" in msg and "'per_language_prefixed'" in msg


def test_unknown_key_is_reported_with_allowed_keys():
    msg = broken(lambda c: c["model"].update(layer=8))
    assert "'model'" in msg and "'layer'" in msg and "layers" in msg


def test_wrong_type():
    msg = broken(lambda c: c["pretrain"].update(lr="fast"))
    assert "pretrain.lr" in msg


def test_missing_required_key():
    msg = broken(lambda c: c["model"].pop("heads"))
    assert "'heads' is a required property" in msg


def test_cross_checks():
    assert "ja" in broken(lambda c: c["pairs"].append("en-ja"))
    assert "no shared layer" in broken(lambda c: c["settings"]["sep_l1_6"]["separate"].update(layers=8))
    assert "need separate token embeddings" in broken(
        lambda c: c["settings"]["default"]["separate"].update(positions=True))
    assert "does not divide" in broken(lambda c: c["model"].update(heads=7))
    assert "need pretrain.sample_break_mode: eos" in broken(lambda c: c["pretrain"].update(sentence_window=20))
    assert "exceeds model.tokens_per_sample" in broken(
        lambda c: c["pretrain"].update(sentence_window=999, sample_break_mode="eos"))


def test_every_error_is_listed():
    def two(c):
        c["model"]["dim"] = "big"
        c["finetune"]["tasks"] = ["xnli", "pos"]
    msg = broken(two)
    assert "model.dim" in msg and "finetune.tasks.1" in msg


def test_grid_cells_and_ids():
    cells = xcfg.grid_cells(PAPER["finetune"]["xnli"])
    assert len(cells) == 2 * 3 * 3
    ids = [xcfg.hp_id(c) for c in cells]
    assert len(set(ids)) == len(ids)
    assert xcfg.cell_from_id(PAPER["finetune"]["xnli"], ids[5]) == cells[5]
    assert len(xcfg.grid_cells(PAPER["finetune"]["ner"])) == 6


def test_monolingual_models_add_en_prime():
    assert xcfg.monolingual_models(PAPER) == ["en", "fr", "de", "ru", "zh", "en_prime"]


def test_analysis_cross_checks():
    assert "analysis.bilingual_setting" in broken(lambda c: c["analysis"].update(bilingual_setting="defualt"))
    assert "'en_para' is not a key of downloads" in broken(lambda c: c["analysis"].update(en_paraphrase="en_para"))
    assert "'en' must be among them" in broken(lambda c: c["monolingual"].update(languages=["fr", "de"]))
    assert "need an entry 'tatoeba_deu_eng'" in broken(lambda c: c["downloads"].pop("tatoeba_deu_eng"))


def test_analysis_targets():
    # the paper config back-translates en' from the 15-way French; the demo reads the testbed's file
    assert xcfg.en_prime_source(PAPER) == "backtranslation"
    assert xcfg.analysis_targets(PAPER) == ["en_prime", "fr", "de", "ru", "zh"]
    demo = xcfg.merge(copy.deepcopy(PAPER), DEMO)
    assert xcfg.en_prime_source(demo) == "download"
    assert xcfg.analysis_targets(demo) == ["en_prime", "fr", "de", "ru", "zh"]
    none = xcfg.merge(copy.deepcopy(PAPER), {"analysis": {"backtranslation": None}})
    assert xcfg.analysis_targets(none) == ["fr", "de", "ru", "zh"]  # no en' column at all
    # Figure 7's bilingual models: every Section 5 pair (en-de too) and en-en' with separate embeddings
    assert xcfg.figure7_pairs(PAPER) == ["en-en_prime", "en-fr", "en-de", "en-ru", "en-zh"]
    extra = xcfg.bilingual_models(PAPER)[30:]
    assert extra == [("sep_emb", "en-en_prime", 1), ("default", "en-de", 1)]
    assert xcfg.data_pairs(PAPER) == ["en-fr", "en-ru", "en-zh", "en-de"]


def test_seeds_replicate_table1_only():
    three = xcfg.merge(copy.deepcopy(PAPER), {"seeds": {"pretrain": [5, 6, 7], "finetune": [1, 2]}})
    xcfg.validate(three)
    models = xcfg.bilingual_models(three)
    assert len(models) == 30 * 3 + 2  # Table 1 once per seed; Figure 7's extra models once
    assert [m for m in models if m[:2] == ("default", "en-fr")] == [("default", "en-fr", s) for s in (5, 6, 7)]
    assert models[-2:] == [("sep_emb", "en-en_prime", 5), ("default", "en-de", 5)]  # the first seed
    assert xcfg.pretrain_seed(three) == 5 and xcfg.finetune_seed(three) == 1


def test_seeds_are_checked():
    with pytest.raises(ConfigError, match="seeds.pretrain"):
        xcfg.validate(xcfg.merge(copy.deepcopy(PAPER), {"seeds": {"pretrain": []}}))
    with pytest.raises(ConfigError, match="seeds.finetune"):
        xcfg.validate(xcfg.merge(copy.deepcopy(PAPER), {"seeds": {"finetune": [1, 1]}}))
    with pytest.raises(ConfigError, match="en_prime_seed.*must differ"):
        xcfg.validate(xcfg.merge(copy.deepcopy(PAPER), {"seeds": {"pretrain": [2]}}))


def test_a_row_may_have_more_pretraining_seeds():
    """seeds.rows: a bimodal row gets more replicates than the others; the models trained once keep
    the first seed, and no model's seed may be the random encoder's."""
    cfg = xcfg.merge(copy.deepcopy(PAPER), {"seeds": {"pretrain": [1, 3, 4], "rows": {"no_anchors": list(
        [1, *range(3, 17)])}}})
    xcfg.validate(cfg)
    assert xcfg.row_seeds(cfg, "no_anchors") == [1, *range(3, 17)] and xcfg.row_seeds(cfg, "default") == [1, 3, 4]
    models = xcfg.bilingual_models(cfg)
    assert len(models) == 27 * 3 + 3 * 15 + 2
    assert [m[2] for m in models if m[:2] == ("no_anchors", "en-fr")] == [1, *range(3, 17)]
    assert "seeds.rows.no_anchors[14]" in xcfg.training_seeds(cfg)
    msg = str(pytest.raises(ConfigError, xcfg.validate, xcfg.merge(copy.deepcopy(cfg), {
        "seeds": {"rows": {"no_anchor": [1, 2]}}})).value)
    assert "config key 'seeds.rows.no_anchor': no such Table 1 row" in msg
    msg = str(pytest.raises(ConfigError, xcfg.validate, xcfg.merge(copy.deepcopy(cfg), {
        "seeds": {"rows": {"default": [3, 1]}}})).value)
    assert "config key 'seeds.rows.default': must start with seeds.pretrain's first seed (1)" in msg
    msg = str(pytest.raises(ConfigError, xcfg.validate, xcfg.merge(copy.deepcopy(cfg), {
        "seeds": {"rows": {"default": [1, 1001]}}})).value)
    assert "analysis.random_seed" in msg and "seeds.rows.default[1]" in msg


def test_a_row_may_have_its_own_seeds_on_one_pair():
    """seeds.pair_rows: a study gives its central pair more replicates than the others (config/real.yaml);
    a pair's list wins over seeds.rows', which wins over seeds.pretrain."""
    cfg = xcfg.merge(copy.deepcopy(PAPER), {"seeds": {"pretrain": [1, 3], "rows": {"default": [1, 3, 4, 5, 6]},
                                                      "pair_rows": {"en-ru": {"default": [1, 3, 4]},
                                                                    "en-zh": {"no_anchors": [1]}}}})
    xcfg.validate(cfg)
    assert xcfg.row_seeds(cfg, "default", "en-fr") == [1, 3, 4, 5, 6]
    assert xcfg.row_seeds(cfg, "default", "en-ru") == [1, 3, 4]
    assert xcfg.row_seeds(cfg, "no_anchors", "en-zh") == [1] and xcfg.row_seeds(cfg, "no_anchors", "en-fr") == [1, 3]
    assert xcfg.row_seeds(cfg, "default") == [1, 3, 4, 5, 6]  # no pair: the most any pair trains
    models = xcfg.bilingual_models(cfg)
    assert [m[2] for m in models if m[:2] == ("default", "en-ru")] == [1, 3, 4]
    assert [m[2] for m in models if m[:2] == ("no_anchors", "en-zh")] == [1]
    assert "seeds.pair_rows.en-ru.default[2]" in xcfg.training_seeds(cfg)
    msg = str(pytest.raises(ConfigError, xcfg.validate, xcfg.merge(copy.deepcopy(cfg), {
        "seeds": {"pair_rows": {"en-ru": {"default": [3, 1]}}}})).value)
    assert "config key 'seeds.pair_rows.en-ru.default': must start with seeds.pretrain's first seed (1)" in msg
    msg = str(pytest.raises(ConfigError, xcfg.validate, xcfg.merge(copy.deepcopy(cfg), {
        "seeds": {"pair_rows": {"en-xx": {"default": [1]}}}})).value)
    assert "config key 'seeds.pair_rows.en-xx': not a pair of the config's languages" in msg


def test_en_prime_from_one_source_only():
    both = xcfg.merge(copy.deepcopy(PAPER), {"analysis": {"en_paraphrase": "xnli_15way"}})
    with pytest.raises(ConfigError, match="either from a ready file"):
        xcfg.validate(both)
    bad = xcfg.merge(copy.deepcopy(PAPER), {"analysis": {"prime_setting": "sep_everything"}})
    with pytest.raises(ConfigError, match="'analysis.prime_setting': 'sep_everything' is not a row"):
        xcfg.validate(bad)
    assert xcfg.tatoeba_ids("zh") == ("tatoeba_cmn", "tatoeba_cmn_eng")


def test_defaults_are_filled_from_the_schema_in_one_place():
    """An absent optional key gets the schema's default, nested and per row; a given value stays."""
    cfg = xcfg.merge(copy.deepcopy(PAPER), {})
    del cfg["pretrain"]["clip_norm"], cfg["codeswitch"]["max_phrase_words"], cfg["preprocess"]["stanford_model"]
    cfg.pop("taskdata", None)
    cfg["rule_resources"]["pretrain"].pop("nodes", None)
    xcfg.validate(cfg)
    schema = xcfg.schema()["properties"]
    assert cfg["pretrain"]["clip_norm"] == schema["pretrain"]["properties"]["clip_norm"]["default"] == 5.0
    assert cfg["codeswitch"]["max_phrase_words"] == 4 and cfg["preprocess"]["stanford_model"] == "pku"
    # a whole absent section, then its keys
    assert cfg["taskdata"] == {"ud_splits": {"train": "train", "dev": "dev", "test": "test"}, "levow_dev_fraction": 0.1,
                               "ud_files": {}}
    # through a $ref (every rule family's resources)
    assert cfg["rule_resources"]["pretrain"]["nodes"] == 1
    given = xcfg.merge(copy.deepcopy(PAPER), {"pretrain": {"clip_norm": 1.5}})
    xcfg.validate(given)
    assert given["pretrain"]["clip_norm"] == 1.5
    # every default the schema states is itself valid: a filled minimal config validates
    assert xcfg.fill_defaults({"taskdata": {}})["taskdata"]["levow_dev_fraction"] == 0.1


def test_liu2020_checks():
    assert "'xx' is not in languages" in broken(lambda c: c["liu2020"]["languages"].append("xx"))
    assert "needs an entry 'muse_en_fr_test'" in broken(lambda c: c["downloads"].pop("muse_en_fr_test"))
    assert "'sw' is not in liu2020.languages" in broken(
        lambda c: c["liu2020"].update(languages=["en", "fr"], retrieval={"languages": ["fr", "sw"]}))
    assert "exceeds the model's tokens_per_sample=512" in broken(lambda c: c["liu2020"].update(windows=[600]))
    assert "source language 'en' and at least one other" in broken(lambda c: c["liu2020"].update(languages=["fr"]))
    assert "leaves none of the model's 12 layers" in broken(lambda c: c["liu2020"].update(xnli={"freeze_layers": 12}))
    assert "should be batch_size, encoder_lr and classifier_lr" in broken(
        lambda c: c["liu2020"].update(xnli={"hp": {"batch_size": 8, "lr": 1e-5}}))
    assert "'mbert_weights' is not a key of downloads" in broken(lambda c: c["downloads"].pop("mbert_weights"))
    assert "m-BERT's token translation needs liu2020.translation.languages" in broken(
        lambda c: c["liu2020"].update(translation={"languages": []}))


def test_liu2020_xnli_defaults_follow_the_paper_and_the_grid():
    cfg = xcfg.load(xcfg.REPO / "config" / "config.yaml")
    xcfg.validate(cfg)
    assert liu2020.xnli_freeze(cfg) == 6  # m-BERT's first 6 of 12 layers fixed (4.3)
    assert liu2020.xnli_hp(cfg) == xcfg.grid_cells(cfg["finetune"]["xnli"])[0]
    # the readings of Liu et al. (docs/liu2020.md), each following the paper by default
    liu = cfg["liu2020"]
    assert liu["translation"]["token_sets"] == "evaluated"  # Table 3: the evaluated text's tokens
    assert liu["sample"] == {"splitter": "sentencex", "seed": 0}  # "sentences", drawn at random
    assert liu["window_tokens"] == "batch"  # "the total number of tokens ... stayed unchanged"
    assert liu["mbert"]["retrieval"] is True  # "Google BERT" in Figures 1 and 3


def test_a_pretraining_jobs_tracked_params_are_every_value_it_uses_in_config_order():
    """Every key of the sections that pretraining uses is a tracked param, at the value the
    validated config gives it (the schema's default where the config file is silent), so a change
    to any of them reruns the job; keys pretraining does not use are not part of the job."""
    cfg = xcfg.load(xcfg.REPO / "config" / "config.yaml")

    def tracked(pretrain, model=cfg["model"]):
        return PretrainJob.build(["d"], ALL_SHARED, model, pretrain, ["en"], 1).tracked()["pretrain"]

    p = tracked(cfg["pretrain"])
    # config order, every key; match_tokens (set by Liu et al.'s windowed models, not a config key) last
    assert list(p) == [*cfg["pretrain"], "match_tokens"] and p["match_tokens"] is None
    assert p["tensorboard"] is True and p["sentence_window"] is None and p["vocab_multiple"] == 64
    off = tracked({**cfg["pretrain"], "tensorboard": False, "sentence_window": 20})
    assert off["tensorboard"] is False and off["sentence_window"] == 20
    assert tracked({**cfg["pretrain"], "not_a_pretraining_key": 1}) == p
    job = PretrainJob.build(["d"], ALL_SHARED, {**cfg["model"], "unused": 3}, cfg["pretrain"], ["en", "fr"], 1)
    assert job.tracked()["model"] == cfg["model"] and job.model.dim == cfg["model"]["dim"]
    assert job.recipe.adam_betas == tuple(cfg["pretrain"]["adam_betas"])
    assert tracked(liu2020.pretrain_section(cfg, "w20"))["sentence_window"] == 20
    assert tracked(liu2020.pretrain_section(cfg, "full"))["sentence_window"] is None




def test_xlms_model_is_the_paper_configs_and_a_job_tracks_every_model_option():
    """The model section follows XLM (the paper ran its code): language embeddings, the tied softmax
    as the MLM head, LayerNorm eps 1e-12, no dropout after the FFN's activation, XLM's
    initialisation. A job tracks each option as the config gives it (BERT's, set back, tracks
    BERT's); a one-language model has no language embeddings (XLM builds none)."""
    cfg = xcfg.load(xcfg.REPO / "config" / "config.yaml")
    m = cfg["model"]
    assert (m["language_embeddings"], m["mlm_head"], m["layer_norm_eps"], m["activation_dropout"], m["init"]) == (
        True, "xlm", 1e-12, 0.0, "xlm")
    older = {**m, "language_embeddings": False, "mlm_head": "bert", "layer_norm_eps": 1e-5,
             "activation_dropout": None, "init": "bert_xavier_attention"}
    for setting, langs in ((cfg["settings"]["default"], ["en", "fr"]), (ALL_SHARED, ["en"])):
        job = PretrainJob.build(["d"], setting, older, cfg["pretrain"], langs, 1)
        assert job.tracked()["model"] == older  # every option tracked as the config gives it
    mono = PretrainJob.build(["d"], ALL_SHARED, m, cfg["pretrain"], ["en"], 1)
    assert mono.tracked()["model"]["language_embeddings"] is False and not mono.model.language_embeddings
    assert mono.tracked()["model"]["mlm_head"] == "xlm"
    # Liu et al.'s models are BERT's: no language embeddings, BERT's head and initialisation
    liu = PretrainJob.build(["d"], ALL_SHARED, liu2020.model_section(cfg), cfg["pretrain"], ["en", "fr", "de"], 1)
    assert not liu.model.language_embeddings and (liu.model.mlm_head, liu.model.init) == ("bert", "bert")
    assert liu.model.layer_norm_eps == 1e-12 and liu.model.activation_dropout == 0.0  # BERT's as well as XLM's


def test_a_rows_language_embeddings_override_the_models():
    """An optional key of a Table 1 row, without a schema default: a row without it takes the
    model's; a row with it overrides the model's, and the job's tracked model says which."""
    cfg = xcfg.load(xcfg.REPO / "config" / "config.yaml")
    assert "language_embeddings" not in cfg["settings"]["default"]
    without = {**cfg["settings"]["default"], "label": "Default, no language embeddings", "language_embeddings": False}
    job = PretrainJob.build(["d"], without, cfg["model"], cfg["pretrain"], ["en", "fr"], 1)
    assert not job.model.language_embeddings and job.tracked()["model"]["language_embeddings"] is False
    base = PretrainJob.build(["d"], cfg["settings"]["default"], cfg["model"], cfg["pretrain"], ["en", "fr"], 1)
    assert base.tracked()["model"]["language_embeddings"] is True
    off = {**cfg["model"], "language_embeddings": False}
    on = PretrainJob.build(["d"], {**cfg["settings"]["default"], "language_embeddings": True}, off, cfg["pretrain"],
                           ["en", "fr"], 1)
    assert on.tracked()["model"] == {**off, "language_embeddings": True}
    bad = copy.deepcopy(PAPER)
    bad["settings"]["default"]["language_embeddings"] = "no"
    with pytest.raises(ConfigError, match="settings.default.language_embeddings"):
        xcfg.validate(bad)


@pytest.mark.parametrize("name", ["default", "no_anchors", "sep_emb", "sep_l1_3", "sep_l1_6", "sep_emb_l1_6"])
def test_random_words_within_one_language_for_the_rows_the_rule_names(name):
    """Section 4.3's in-language random words: with the paper config's rule (``separate``) every
    Sep row draws them from the sample's language (Sep Emb rows always did), Default rows never;
    with ``separate_embeddings`` only the rows with separate embeddings. The rule is tracked."""
    cfg = xcfg.load(xcfg.REPO / "config" / "config.yaml")
    sep = cfg["settings"][name]["separate"]
    assert cfg["pretrain"]["in_language_random_words"] == "separate"
    job = PretrainJob.build(["d"], cfg["settings"][name], cfg["model"], cfg["pretrain"], ["en", "fr"], 1)
    assert job.in_language_random_words == (sep["layers"] > 0 or sep["embeddings"])
    assert job.tracked()["pretrain"]["in_language_random_words"] == "separate"
    earlier = PretrainJob.build(["d"], cfg["settings"][name], cfg["model"],
                                {**cfg["pretrain"], "in_language_random_words": "separate_embeddings"}, ["en", "fr"], 1)
    assert earlier.in_language_random_words == sep["embeddings"]
    assert earlier.tracked()["pretrain"]["in_language_random_words"] == "separate_embeddings"


def test_a_pretraining_job_names_what_its_sections_lack():
    cfg = xcfg.load(xcfg.REPO / "config" / "config.yaml")
    model = {k: v for k, v in cfg["model"].items() if k != "heads"}
    with pytest.raises(ConfigError, match="model: missing heads"):
        PretrainJob.build(["d"], ALL_SHARED, model, cfg["pretrain"], ["en"], 1)


def test_speed_options_have_their_schema_default_and_allowed_values():
    """pretrain.vocab_multiple and pretrain.compile change how fast a model trains, not what it
    learns: the schema fills them in when absent, a job tracks them like every key, and only
    their allowed values pass."""
    cfg = xcfg.load(xcfg.REPO / "config" / "config.yaml")
    xcfg.validate(cfg)
    assert cfg["pretrain"]["vocab_multiple"] == 64 and cfg["pretrain"]["compile"] == "auto"

    def job(pretrain):
        return PretrainJob.build(["d"], ALL_SHARED, cfg["model"], pretrain, ["en"], 1)

    p = job(cfg["pretrain"]).tracked()["pretrain"]
    assert (p["vocab_multiple"], p["compile"], p["precision"]) == (64, "auto", cfg["pretrain"]["precision"])
    changed = job({**cfg["pretrain"], "vocab_multiple": 1, "compile": False})
    assert changed.tracked()["pretrain"]["vocab_multiple"] == 1 and changed.tracked()["pretrain"]["compile"] is False
    assert changed.recipe.vocab_multiple == 1 and job(cfg["pretrain"]).recipe.compile == "auto"
    for value in (True, False, "auto"):
        xcfg.validate({**copy.deepcopy(PAPER), "pretrain": {**PAPER["pretrain"], "compile": value}})
    assert "'pretrain.compile'" in broken(lambda c: c["pretrain"].update(compile="yes"))
    assert "'pretrain.vocab_multiple'" in broken(lambda c: c["pretrain"].update(vocab_multiple=0))


def test_a_precision_fairseq_cannot_run_is_refused_with_the_reason():
    msg = broken(lambda c: c["pretrain"].update(precision="memory_efficient_fp16"))
    assert "'pretrain.precision'" in msg and "'fp16', 'bf16', 'fp32'" in msg
    assert "TPU path" in msg and "never used" in msg  # the schema's reason, in the message


def test_liu2020_pretrain_overrides_the_pretrain_section_for_its_models_only():
    cfg = xcfg.load(xcfg.REPO / "config" / "config.yaml", xcfg.REPO / "config" / "demo.yaml")
    xcfg.validate(cfg)
    full, w20 = liu2020.pretrain_section(cfg, "full"), liu2020.pretrain_section(cfg, "w20")
    assert full["sample_break_mode"] == "eos" and full["lr"] == 2.0e-3 and full["sentence_window"] is None
    assert w20["sentence_window"] == 20 and w20["batch_size_per_gpu"] == 64
    # the windowed model is matched in tokens to the full one (its batch measured when it starts)
    assert "match_tokens" not in full and w20["match_tokens"] == {"by": "batch", "sample_break_mode": "eos"}
    # a job's tracked params: the windowed model's name the match, the full model's do not
    job = {wid: PretrainJob.build(["d"], ALL_SHARED, liu2020.model_section(cfg), liu2020.pretrain_section(cfg, wid),
                                  ["en", "fr"], 1).tracked()["pretrain"] for wid in ("full", "w20")}
    assert job["full"]["match_tokens"] is None and job["full"]["sentence_window"] is None
    assert job["w20"]["match_tokens"] == {"by": "batch", "sample_break_mode": "eos"}
    cfg["liu2020"]["window_tokens"] = "none"
    assert liu2020.pretrain_section(cfg, "w20")["match_tokens"] is None
    assert cfg["pretrain"]["sample_break_mode"] == "none" and cfg["pretrain"]["lr"] == 1.0e-3  # Table 1's models


def test_demo_full_is_the_sentence_regime_with_three_seeds_on_the_close_pair():
    """`make demo-full`: one sentence per sample, 4,000 updates of 64 sentences (the length English
    chose, docs/probes.md) at lr 2e-3 after 500 warm-up updates, every validation's checkpoint kept,
    three pretraining seeds, all the fine-tuning data; the demo's tiny model."""
    from xling.pretrain.schedule import schedule

    cfg = xcfg.load(xcfg.REPO / "config" / "config.yaml", xcfg.REPO / "config" / "demo.yaml",
                    xcfg.REPO / "config" / "demo_full.yaml")
    xcfg.validate(cfg)
    s = schedule(cfg["pretrain"], cfg["model"])
    assert s.max_updates == 4000 and s.global_batch_streams == 64 and s.updates_per_epoch == 250
    assert cfg["pretrain"]["sample_break_mode"] == "eos" and cfg["pretrain"]["lr"] == 2.0e-3
    assert cfg["pretrain"]["keep_interval_updates"] >= s.max_epoch  # every epoch's checkpoint: the curve
    assert cfg["pretrain"]["warmup_updates"] == 500 and {k: cfg["model"][k] for k in DEMO["model"]} == DEMO["model"]
    assert cfg["seeds"]["pretrain"] == [1, 2, 3] and cfg["pairs"] == ["en-fr"]
    assert cfg["run_name"] == "demo_full" and cfg["download"]["mirror"].startswith("results/demo_full/")
    # the whole English training set of each task, as the probes that learnt English
    assert cfg["finetune"]["xnli"]["max_train_examples"] >= 6000 and cfg["finetune"]["xnli"]["epochs"] == 4


def test_the_language_embedding_overlay_adds_a_twin_of_each_row_of_the_central_finding():
    """config/demo_full_langemb.yaml: Default, No anchors and Sep Emb + L1-6 again without language
    embeddings, each twin the same row but for its label and that key; demo_full's own rows and
    their jobs' tracked params are as without the overlay (their finished models are reused)."""
    files = [xcfg.REPO / "config" / f for f in ("config.yaml", "demo.yaml", "demo_full.yaml")]
    base, over = xcfg.load(*files), xcfg.load(*files, xcfg.REPO / "config" / "demo_full_langemb.yaml")
    twins = xcfg.language_embedding_twins(over)
    assert twins == {"default": "default_no_lang_emb", "no_anchors": "no_anchors_no_lang_emb",
                     "sep_emb_l1_6": "sep_emb_l1_6_no_lang_emb"}
    assert xcfg.language_embedding_twins(base) == {}
    for row, twin in twins.items():
        assert over["settings"][row] == base["settings"][row]
        job = {s: PretrainJob.build(["d"], over["settings"][s], over["model"], over["pretrain"], ["en", "fr"], 1)
               for s in (row, twin)}
        assert job[row].model.language_embeddings and not job[twin].model.language_embeddings
        assert job[row].tracked() == PretrainJob.build(["d"], base["settings"][row], base["model"], base["pretrain"],
                                                       ["en", "fr"], 1).tracked()
        mine, theirs = job[twin].tracked(), job[row].tracked()
        assert mine["model"] == {**theirs["model"], "language_embeddings": False}
        assert mine["pretrain"] == theirs["pretrain"]


def test_a_pair_may_train_some_rows_only():
    """pair_rows: the rows of the central finding on two more pairs, every row on the first; a pair or
    row that does not exist, or a pair without Default, is one error naming the key."""
    central = ["default", "no_anchors", "sep_l1_6", "sep_emb_l1_6"]
    cfg = xcfg.merge(copy.deepcopy(PAPER), {"pair_rows": {"en-ru": central, "en-zh": central}})
    xcfg.validate(cfg)
    models = xcfg.bilingual_models(cfg)
    assert sorted(s for s, p, _ in models if p == "en-ru") == sorted(central)
    assert len([m for m in models if m[1] == "en-fr"]) == 10
    assert xcfg.trains(cfg, "extra_anchors", "en-fr") and not xcfg.trains(cfg, "extra_anchors", "en-zh")
    assert "config key 'pair_rows.en-xx': not a pair of the config's languages" in broken(
        lambda c: c.update(pair_rows={"en-xx": central}))
    narrowed = xcfg.merge(copy.deepcopy(cfg), {"pairs": ["en-fr"]})  # an overlay that trains en-fr only
    xcfg.validate(narrowed)
    assert not [m for m in xcfg.bilingual_models(narrowed) if m[0] == "no_anchors" and m[1] != "en-fr"]
    assert "config key 'pair_rows.en-ru': no such Table 1 row 'sep_emb_l1_9'" in broken(
        lambda c: c.update(pair_rows={"en-ru": ["default", "sep_emb_l1_9"]}))
    assert "config key 'pair_rows.en-ru': must train 'default'" in broken(
        lambda c: c.update(pair_rows={"en-ru": ["no_anchors"]}))
