"""The generated fairseq-train command lines carry the paper's hyperparameters (3.1) and
each Table 1 separation option."""

from pathlib import Path

import pytest

from support.inprocess import parse_command
from xling import config as xcfg
from xling.errors import ConfigError
from xling.pretrain.command import ResumeLayout, cpu_process_commands, fairseq_train_command
from xling.pretrain.fairseq_plugin import USER_DIR
from xling.pretrain.job import ALL_SHARED, PretrainJob
from xling.pretrain.schedule import schedule

ROOT = Path(__file__).resolve().parents[1]
CONFIG = xcfg.load(ROOT / "config" / "config.yaml")  # defaults filled in, as the workflow sees it


def opts(cmd):
    """argv -> {option: value or True}."""
    out, i = {}, 2
    while i < len(cmd):
        key = cmd[i]
        assert key.startswith("--"), key
        if i + 1 < len(cmd) and not cmd[i + 1].startswith("--"):
            out[key] = cmd[i + 1]
            i += 2
        else:
            out[key] = True
            i += 1
    return out


def paper_command(setting="default", gpus=8, seed=1, **kw):
    job = PretrainJob.build("R/bin/x/en-fr", CONFIG["settings"][setting], CONFIG["model"], CONFIG["pretrain"],
                            ["en", "fr"], seed)
    return fairseq_train_command(job, "R/pretrain/x/en-fr", gpus, **kw)


def test_paper_hyperparameters():
    cmd = paper_command()
    o = opts(cmd)
    assert cmd[0] == "fairseq-train" and cmd[1] == "R/bin/x/en-fr"
    assert o["--user-dir"] == USER_DIR and Path(USER_DIR, "__init__.py").exists()
    assert o["--encoder-layers"] == "8" and o["--encoder-attention-heads"] == "12"
    assert o["--encoder-embed-dim"] == "768" and o["--encoder-ffn-embed-dim"] == "3072"
    assert o["--activation-fn"] == "gelu" and float(o["--dropout"]) == 0.1
    assert o["--optimizer"] == "xling_adam" and o["--lr-scheduler"] == "inverse_sqrt"
    assert float(o["--lr"]) == 1e-4 and o["--warmup-updates"] == "30000"
    assert o["--tokens-per-sample"] == "256" and o["--sample-break-mode"] == "none"
    # 8 GPUs x 96 streams = 768 per update, no accumulation
    assert o["--batch-size"] == "96" and o["--update-freq"] == "1"
    # XLM's epoch: 200k streams counted per GPU in steps of 96 -> 2,084 updates; 200 epochs
    assert int(o["--max-update"]) == 200 * 2084 == 416_800
    assert int(o["--validate-interval-updates"]) == 2084 == int(o["--save-interval-updates"])
    # XLM's optimiser settings around the paper's lr and warmup
    assert o["--adam-betas"] == "(0.9, 0.999)" and float(o["--adam-eps"]) == 1e-6
    assert float(o["--weight-decay"]) == 0.01 and float(o["--clip-norm"]) == 5.0
    assert float(o["--mask-prob"]) == 0.15
    assert float(o["--leave-unmasked-prob"]) == 0.1 and float(o["--random-token-prob"]) == 0.1
    assert float(o["--multilang-sampling-alpha"]) == 0.7
    assert o["--seed"] == "1" and o["--save-dir"] == "R/pretrain/x/en-fr"
    # the config's bf16 (A100, H100): autocast in the plugin, fp32 weights, no loss scaling, no waiting
    # for the GPU; the paper's V100 (config/v100.yaml): fp16 with loss scaling
    assert o["--autocast"] == "bf16" and "--loss-scaling" not in o and "--cpu" not in o
    v100 = xcfg.load(ROOT / "config" / "config.yaml", ROOT / "config" / "v100.yaml")
    job = PretrainJob.build(["R/bin/x/en-fr"], v100["settings"]["default"], v100["model"], v100["pretrain"],
                            ["en", "fr"], 1)
    o16 = opts(fairseq_train_command(job, Path("R/pretrain/x/en-fr"), 8))
    assert o16["--autocast"] == "fp16" and o16["--loss-scaling"] is True
    assert o["--deferred-grad-norm"] is True and o["--deferred-loss-log"] is True
    assert o["--vocab-multiple"] == "64" and o["--compile-encoder"] == "auto"
    assert o["--distributed-world-size"] == "8"
    # English dev loss is the first validation subset: it selects checkpoint_best.pt
    assert o["--valid-subset"] == "valid_en,valid_fr" and o["--best-checkpoint-metric"] == "loss"
    assert o["--one-language-batches"] is True
    assert "--separate-embeddings" not in o and o["--separate-layers"] == "0"


def test_tensorboard_logs_go_beside_the_model_when_asked():
    # the job's save_dir is <model>/fairseq: the event files go to <model>/tensorboard
    o = opts(paper_command())
    assert CONFIG["pretrain"]["tensorboard"] is True and o["--tensorboard-logdir"] == "R/pretrain/x/tensorboard"
    assert parse_command(paper_command(gpus=0)).common.tensorboard_logdir == "R/pretrain/x/tensorboard"
    off = {**CONFIG["pretrain"], "tensorboard": False}
    job = PretrainJob.build("d", CONFIG["settings"]["default"], CONFIG["model"], off, ["en"], 1)
    assert "--tensorboard-logdir" not in fairseq_train_command(job, "s/fairseq", 1)


def test_cpu_runs_fp32_and_seed_override():
    o = opts(paper_command(gpus=0, seed=2))
    assert o["--cpu"] is True and "--fp16" not in o and "--bf16" not in o and "--autocast" not in o
    assert "--deferred-grad-norm" not in o  # nothing to wait for on a CPU
    assert o["--seed"] == "2" and "--distributed-world-size" not in o


# fairseq 0.12's options that cannot run with this plugin on a GPU: --bf16 takes its TPU path,
# --memory-efficient-* refuse our optimizer, --amp's scaler syncs (and is not how we scale)
NEVER = ("--bf16", "--memory-efficient-fp16", "--memory-efficient-bf16", "--amp", "--fp16")


@pytest.mark.parametrize("precision,options", [("bf16", ["--autocast", "bf16"]),
                                               ("fp16", ["--autocast", "fp16", "--loss-scaling"]),
                                               ("fp32", [])])
def test_gpu_precisions_autocast_in_the_plugin(precision, options):
    pre = dict(CONFIG["pretrain"], precision=precision)
    job = PretrainJob.build("d", CONFIG["settings"]["default"], CONFIG["model"], pre, ["en", "fr"], 1)
    cmd = fairseq_train_command(job, "s", 8)
    assert not set(NEVER) & set(cmd)
    autocast = cmd[cmd.index("--autocast"):cmd.index("--autocast") + 2] if "--autocast" in cmd else []
    assert autocast + (["--loss-scaling"] if "--loss-scaling" in cmd else []) == options
    cfg = parse_command(cmd)  # fairseq reads every option
    assert cfg.task.autocast == (options[1] if options else "none") and not cfg.common.fp16 and not cfg.common.bf16
    assert cfg.optimizer.loss_scaling == (precision == "fp16") and cfg.optimizer.deferred_grad_norm
    assert cfg.optimizer.loss_scale_init == cfg.common.fp16_init_scale


def test_a_jobs_params_give_every_key_the_commands_options_follow_them():
    """A job's recipe holds every key (the schema's defaults filled in by the config): one that
    lacks one is refused; the config's values reach the command (64 rows, compile on GPUs)."""
    pre = {k: v for k, v in CONFIG["pretrain"].items() if k not in ("vocab_multiple", "compile")}
    with pytest.raises(ConfigError, match="pretrain: missing vocab_multiple, compile"):
        PretrainJob.build("d", CONFIG["settings"]["default"], CONFIG["model"], pre, ["en"], 1)
    o = opts(paper_command())
    assert o["--vocab-multiple"] == "64" and o["--compile-encoder"] == "auto"
    for setting, flag in ((True, "on"), (False, "off"), ("auto", "auto")):
        job = PretrainJob.build("d", CONFIG["settings"]["default"], CONFIG["model"],
                                dict(pre, compile=setting, vocab_multiple=8), ["en"], 1)
        o = opts(fairseq_train_command(job, "s", 1))
        assert o["--compile-encoder"] == flag and o["--vocab-multiple"] == "8"
    with pytest.raises(ConfigError, match="config key 'pretrain.compile': 'yes' is not allowed"):
        PretrainJob.build("d", CONFIG["settings"]["default"], CONFIG["model"], dict(pre, compile="yes"), ["en"], 1)


def test_a_resumed_run_keeps_the_layout_it_was_started_with():
    legacy = ResumeLayout(vocab_multiple=1, fairseq_fp16=True)
    o = opts(paper_command(resume=legacy))
    assert o["--fp16"] is True and "--autocast" not in o and "--deferred-grad-norm" not in o
    assert o["--vocab-multiple"] == "1"
    o = opts(paper_command(resume=ResumeLayout(vocab_multiple=64, fairseq_fp16=False)))
    assert "--fp16" not in o and o["--autocast"] == "bf16" and o["--vocab-multiple"] == "64"
    o = opts(paper_command(gpus=0, resume=legacy))  # an fp32 CPU run of older code
    assert "--fp16" not in o and o["--vocab-multiple"] == "1"


@pytest.mark.parametrize("name", list(CONFIG["settings"]))
def test_separation_options(name):
    sep = CONFIG["settings"][name]["separate"]
    o = opts(paper_command(name))
    assert ("--separate-embeddings" in o) == sep["embeddings"]
    # random words within one language in every Sep row (4.3); the per-language softmax with separate embeddings
    assert ("--in-language-replacement" in o) == (sep["embeddings"] or sep["layers"] > 0)
    assert ("--language-vocab-mask" in o) == sep["embeddings"]
    assert int(o["--separate-layers"]) == sep["layers"]
    assert ("--find-unused-parameters" in o) == (sep["embeddings"] or sep["layers"] > 0)
    # the paper's Sep Emb separates positions too
    assert "--shared-positions" not in o


def test_a_job_is_checked_where_the_config_is():
    """The schema's allowed values and the config's cross-checks, for a job's own sections."""
    with pytest.raises(ConfigError, match="'separate.positions': separate positional embeddings need separate token"):
        PretrainJob.build("d", {"separate": {"embeddings": False, "positions": True, "layers": 0}},
                          CONFIG["model"], CONFIG["pretrain"], ["en", "fr"], 1)
    with pytest.raises(ConfigError, match="'pretrain.precision': 'fp8' is not allowed"):
        PretrainJob.build("d", ALL_SHARED, CONFIG["model"], dict(CONFIG["pretrain"], precision="fp8"), ["en"], 1)
    with pytest.raises(ConfigError, match="distinct languages"):
        PretrainJob.build("d", ALL_SHARED, CONFIG["model"], CONFIG["pretrain"], ["en", "en"], 1)


@pytest.mark.parametrize("name", ["default", "sep_emb_l1_6"])
def test_command_parses_with_fairseq(name):
    cmd = paper_command(name, gpus=0)
    cfg = parse_command(cmd)
    sep = CONFIG["settings"][name]["separate"]
    assert cfg.model.encoder_layers == 8 and cfg.model.separate_layers == sep["layers"]
    assert cfg.model.separate_embeddings == sep["embeddings"]
    assert cfg.optimization.max_update == schedule(CONFIG["pretrain"], CONFIG["model"]).max_updates
    # one CPU process makes up the paper's 768-stream update with 8 accumulated steps of 96
    assert cfg.dataset.batch_size == 96 and list(cfg.optimization.update_freq) == [8]
    assert cfg.task.languages == "en,fr"
    assert tuple(eval(cfg.optimizer.adam_betas)) == (0.9, 0.999)
    assert cfg.optimization.clip_norm == 5.0


def test_monolingual_and_bad_options():
    job = PretrainJob.build("d", {"separate": {"embeddings": False, "layers": 0}}, CONFIG["model"], CONFIG["pretrain"],
                            ["en"], 2)
    o = opts(fairseq_train_command(job, "s", 1))
    assert o["--valid-subset"] == "valid_en" and o["--languages"] == "en" and o["--seed"] == "2"
    with pytest.raises(ConfigError, match="9 separate layers leaves no shared layer"):
        PretrainJob.build("d", {"separate": {"embeddings": False, "layers": 9}}, CONFIG["model"], CONFIG["pretrain"],
                          ["en", "fr"], 1)
    bad = dict(CONFIG["pretrain"], save_interval_updates=7)
    job = PretrainJob.build("d", CONFIG["settings"]["default"], CONFIG["model"], bad, ["en", "fr"], 1)
    with pytest.raises(ConfigError, match="must divide the 2084 updates"):
        fairseq_train_command(job, "s")


@pytest.mark.parametrize("gpus,step,freq", [(8, 96, 1), (4, 96, 2), (2, 96, 4), (1, 96, 8), (16, 48, 1),
                                            (3, 64, 4)])
def test_update_is_the_paper_batch_on_any_gpu_count(gpus, step, freq):
    """GPUs x --batch-size x --update-freq is always the configured 768 streams."""
    o = opts(paper_command(gpus=gpus))
    assert (int(o["--batch-size"]), int(o["--update-freq"])) == (step, freq)
    assert gpus * step * freq == 768
    assert ("--distributed-world-size" in o) == (gpus > 1)


def test_gpu_count_that_does_not_divide_the_batch_is_refused():
    with pytest.raises(ConfigError, match="cannot share the global batch of 768 streams"):
        paper_command(gpus=5)


def test_memory_cap_per_step_accumulates_instead():
    pre = dict(CONFIG["pretrain"], max_streams_per_step=32)
    job = PretrainJob.build("d", CONFIG["settings"]["default"], CONFIG["model"], pre, ["en", "fr"], 1)
    o = opts(fairseq_train_command(job, "s", 8))
    assert (o["--batch-size"], o["--update-freq"]) == ("32", "3")


def test_cpu_ranks_get_gloo_legacy_ddp_and_their_own_rank():
    pre = dict(CONFIG["pretrain"], batch_gpus=2, batch_size_per_gpu=8)
    job = PretrainJob.build("d", CONFIG["settings"]["sep_emb_l1_3"], CONFIG["model"], dict(pre, cpu_processes=2),
                            ["en", "fr"], 1)
    cmd = fairseq_train_command(job, "s")
    o = opts(cmd)
    assert o["--distributed-world-size"] == "2" and o["--distributed-backend"] == "gloo"
    assert o["--ddp-backend"] == "legacy_ddp" and "--find-unused-parameters" not in o
    ranks = cpu_process_commands(cmd, 12345)
    assert [opts(c)["--distributed-rank"] for c in ranks] == ["0", "1"]
    assert all(opts(c)["--distributed-init-method"] == "tcp://127.0.0.1:12345" for c in ranks)
    # a single process needs no launcher
    single = paper_command(gpus=0)
    assert cpu_process_commands(single, 1) == [single]


def test_several_data_directories_are_joined_for_epoch_cycling():
    job = PretrainJob.build(["R/bin/a", "R/bin/a/v1"], CONFIG["settings"]["default"], CONFIG["model"],
                            CONFIG["pretrain"], ["en", "fr"], 1)
    cmd = fairseq_train_command(job, "s", 8)
    assert cmd[1] == "R/bin/a:R/bin/a/v1"


@pytest.mark.parametrize("name", list(CONFIG["settings"]))
def test_random_words_within_one_language_in_every_sep_row(name):
    """Section 4.3's "we only sample random words within one language", written after the five Sep
    rows: every row with per-language parameters, not only those with separate embeddings (our
    earlier reading, `separate_embeddings`, kept as an option); never a row that shares everything
    (3.1: "the random words could be foreign words")."""
    sep = CONFIG["settings"][name]["separate"]
    assert CONFIG["pretrain"]["in_language_random_words"] == "separate"
    per_language = sep["embeddings"] or sep["layers"] > 0
    assert ("--in-language-replacement" in paper_command(name)) == per_language
    earlier = {**CONFIG["pretrain"], "in_language_random_words": "separate_embeddings"}
    job = PretrainJob.build("d", CONFIG["settings"][name], CONFIG["model"], earlier, ["en", "fr"], 1)
    cmd = fairseq_train_command(job, "s", 8)
    assert ("--in-language-replacement" in cmd) == sep["embeddings"]


def test_xlm_model_options_reach_fairseq():
    """The paper config's model is XLM's: language embeddings (two languages only), the tied
    softmax as the head, LayerNorm eps 1e-12, no dropout after the FFN's activation, XLM's
    initialisation; a model section without those keys is refused (the schema fills them in a
    config: a job never guesses them)."""
    o = opts(paper_command())
    assert o["--language-embeddings"] is True and o["--mlm-head"] == "xlm" and float(o["--layer-norm-eps"]) == 1e-12
    assert float(o["--activation-dropout"]) == 0.0 and o["--param-init"] == "xlm"
    cfg = parse_command(paper_command(gpus=0)).model
    assert cfg.language_embeddings is True and cfg.mlm_head == "xlm" and cfg.layer_norm_eps == 1e-12
    assert cfg.activation_dropout == 0.0 and cfg.param_init == "xlm"
    job = PretrainJob.build("d", CONFIG["settings"]["default"], CONFIG["model"], CONFIG["pretrain"], ["en"], 1)
    mono = opts(fairseq_train_command(job, "s", 1))
    assert "--language-embeddings" not in mono  # XLM builds none for one language
    older = {k: CONFIG["model"][k] for k in ("layers", "heads", "dim", "ffn_dim", "activation", "dropout",
                                             "attention_dropout", "tokens_per_sample")}
    with pytest.raises(ConfigError, match="model: missing language_embeddings, mlm_head, layer_norm_eps"):
        PretrainJob.build("d", CONFIG["settings"]["default"], older, CONFIG["pretrain"], ["en", "fr"], 1)
