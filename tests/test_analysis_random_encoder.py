"""Figure 7's random encoder is independent of every model it is compared with. fairseq-train
seeds torch right before it builds a model, and the CKA job builds the random encoder the same
way from ``analysis.random_seed``: with a seed some model trains with, the "random" encoder is
that model at update 0. The config check refuses such a seed, and no tensor of the random encoder
equals or correlates with the weights any compared model starts from."""

import copy

import pytest
import torch
from fairseq import tasks, utils

from support.inprocess import parse_command
from support.toy_data import TINY_MODEL, TINY_PRETRAIN, write_toy_data
from xling import config as xcfg
from xling.errors import ConfigError
from xling.model.checkpoint import distance_from_initial_weights, load_encoder, training_seed
from xling.pretrain.command import fairseq_train_command
from xling.pretrain.job import PretrainJob

CONFIGS = {
    "paper": ["config.yaml"],
    "demo": ["config.yaml", "demo.yaml"],
    "demo_full": ["config.yaml", "demo.yaml", "demo_full.yaml"],
    "demo_full_langemb": ["config.yaml", "demo.yaml", "demo_full.yaml", "demo_full_langemb.yaml"],
    "demo_full_gpu": ["config.yaml", "demo.yaml", "demo_full_gpu.yaml"],
}
XLM_KEYS = ("language_embeddings", "mlm_head", "layer_norm_eps", "activation_dropout", "init")
ALL_SHARED = {"separate": {"embeddings": False, "layers": 0}}


def load(name: str) -> dict:
    cfg = xcfg.load(*(xcfg.REPO / "config" / f for f in CONFIGS[name]))
    xcfg.validate(cfg)
    return cfg


@pytest.mark.parametrize("name", CONFIGS)
def test_random_encoder_seed_is_no_trained_models_seed(name):
    cfg = load(name)
    assert int(cfg["analysis"]["random_seed"]) not in xcfg.training_seeds(cfg).values()


@pytest.mark.parametrize("key, seed_of", [
    ("seeds.pretrain[0]", lambda cfg: cfg["seeds"]["pretrain"][0]),
    ("monolingual.en_prime_seed", lambda cfg: cfg["monolingual"]["en_prime_seed"]),
])
def test_random_encoder_seed_of_a_trained_model_is_refused(key, seed_of):
    cfg = copy.deepcopy(xcfg.load(xcfg.REPO / "config" / "config.yaml"))
    xcfg.fill_defaults(cfg)
    cfg["analysis"]["random_seed"] = seed_of(cfg)
    with pytest.raises(ConfigError) as info:
        xcfg.validate(cfg)
    message = str(info.value)
    assert "analysis.random_seed" in message and key in message


def start_of_training(data_dir, save_dir, langs, seed, model) -> tuple:
    """The checkpoint file and weights of a model as ``fairseq-train`` builds it before its first
    update (fairseq_cli.train: set_torch_seed, setup_task, build_model, in that order)."""
    job = PretrainJob.build(data_dir, ALL_SHARED, model, TINY_PRETRAIN, list(langs), seed)
    cmd = fairseq_train_command(job, save_dir)
    cfg = parse_command(cmd)
    utils.set_torch_seed(cfg.common.seed)
    task = tasks.setup_task(cfg.task)
    built = task.build_model(cfg.model)
    state = {k: v.detach().clone() for k, v in built.state_dict().items()}
    ckpt = save_dir / "checkpoint_start.pt"
    # as fairseq saves it: the common section a plain dict
    cfg_saved = {"model": cfg.model, "task": cfg.task, "common": {"seed": int(cfg.common.seed)}}
    torch.save({"cfg": cfg_saved, "model": state}, ckpt)
    return ckpt, {k.removeprefix("encoder."): v for k, v in state.items()}


def assert_independent(random_state: dict, start: dict, what: str) -> None:
    """No float tensor of the random encoder equals or correlates (beyond 5 standard errors of a
    correlation of independent draws) with the same-named tensor of ``start``; tables of other
    sizes are compared on their common prefix, where a shared seed would show. Constant tensors
    (LayerNorm's 1 and 0, zero biases) are alike by construction and carry no draw."""
    compared = 0
    for name, r in random_state.items():
        s = start.get(name)
        if s is None or not r.is_floating_point():
            continue
        a, b = r.flatten().double(), s.flatten().double()
        n = min(len(a), len(b))
        a, b = a[:n], b[:n]
        if n < 16 or float(a.std()) == 0 or float(b.std()) == 0:
            continue
        assert not torch.equal(a, b), f"{what}: {name} equals the compared model's initial weights"
        corr = float(torch.corrcoef(torch.stack([a, b]))[0, 1])
        assert abs(corr) < 5 / n ** 0.5, f"{what}: {name} correlates {corr:.3f} with the compared model's start"
        compared += 1
    assert compared > 10, f"{what}: only {compared} tensors compared"


class Starts:
    """Toy data per language set and the models' starts, built once for every config (the
    configs share most seeds and XLM's model)."""

    def __init__(self, root):
        self.root, self.data, self.starts, self.random = root, {}, {}, {}

    def start(self, langs: tuple, seed: int, model: dict) -> tuple:
        key = (langs, seed, tuple(sorted(model.items())))
        if key not in self.starts:
            if langs not in self.data:
                self.data[langs] = write_toy_data(self.root / "-".join(langs), list(langs), n_train=40, seed=3)
            save = self.root / f"start{len(self.starts)}"
            save.mkdir()
            self.starts[key] = start_of_training(self.data[langs], save, langs, seed, model)
        return self.starts[key]

    def random_encoder(self, ckpt, seed: int) -> dict:
        """Built as the CKA job builds it: the checkpoint's architecture, initialised with ``seed``."""
        if (ckpt, seed) not in self.random:
            self.random[(ckpt, seed)] = load_encoder(ckpt, random_init_seed=seed).encoder.state_dict()
        return self.random[(ckpt, seed)]


@pytest.fixture(scope="module")
def starts(tmp_path_factory):
    return Starts(tmp_path_factory.mktemp("starts"))


@pytest.mark.parametrize("name", CONFIGS)
def test_random_encoder_is_independent_of_every_compared_models_start(name, starts):
    """For each Figure 7 pair: the random encoder (the target's monolingual architecture, built as
    the CKA job builds it) against the starts of the English and target monolingual models and
    the pair's bilingual model, with the seeds the workflow trains them with."""
    cfg = load(name)
    model = {**TINY_MODEL, **{k: cfg["model"][k] for k in XLM_KEYS if k in cfg["model"]}}
    src, seed = cfg["source_language"], int(cfg["analysis"]["random_seed"])
    pairs = xcfg.figure7_pairs(cfg)
    assert pairs, name
    # the toy architectures and the seeds are all that differ between pairs: each case once
    cases = {}
    for pair in pairs:
        target = xcfg.pair_langs(pair)[1]
        # en′ is English text under English's dictionary; every other target is a foreign language
        target_data = (src,) if xcfg.is_prime(target) else ("fr",)
        cases.setdefault((target_data, xcfg.monolingual_seed(cfg, target)), pair)
    for (target_data, target_seed), pair in cases.items():
        target_ckpt, target_start = starts.start(target_data, target_seed, model)
        random = starts.random_encoder(target_ckpt, seed)
        compared = {
            "monolingual source": starts.start((src,), xcfg.monolingual_seed(cfg, src), model)[1],
            "monolingual target": target_start,
            "bilingual": starts.start((src, "fr"), xcfg.pretrain_seed(cfg), model)[1],
        }
        for role, weights in compared.items():
            assert_independent(random, weights, f"{name} {pair}: random vs {role}")


def test_random_encoder_of_a_models_seed_is_that_models_start(tmp_path):
    """What the check above guards against, and what the drift measure rests on: the encoder
    rebuilt with a checkpoint's own seed is exactly the model fairseq-train started from."""
    data = write_toy_data(tmp_path / "en", ["en"], n_train=40, seed=3)
    ckpt, weights = start_of_training(data, tmp_path, ["en"], 7, {**TINY_MODEL, "init": "xlm"})
    assert training_seed(ckpt) == 7
    rebuilt = load_encoder(ckpt, random_init_seed=7).encoder.state_dict()
    assert all(torch.equal(rebuilt[k], weights[k]) for k in weights if k in rebuilt)
    assert distance_from_initial_weights(ckpt) == 0.0
    # a model that moved: the relative distance of its weights from that start
    state = torch.load(ckpt, weights_only=False)
    moved = {k: v + 0.1 * v if v.is_floating_point() else v for k, v in state["model"].items()}
    torch.save({**state, "model": moved}, ckpt)
    assert distance_from_initial_weights(ckpt) == pytest.approx(0.1, rel=1e-6)
