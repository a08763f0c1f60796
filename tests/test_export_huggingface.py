"""Export to transformers: the exported model (XLMWithLMHeadModel for XLM's head, BertForMaskedLM
for BERT's) gives our encoder's hidden states and MLM logits in each language (its language
embeddings through ``langs`` or ``token_type_ids``), its tokenizer turns raw text into the ids of
our own tokenisation (xling.export.Pretokenizer: Moses or the segmenter, then subword-nmt's BPE),
and models with per-language parts are refused without leaving an output behind."""

from __future__ import annotations

import json
import random
import runpy
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

import support.export_compare as compare  # noqa: E402
from support.tiny_checkpoint import write_tiny_checkpoint  # noqa: E402
from xling.errors import InputError

pytest.importorskip("transformers")
from transformers import AutoModelForMaskedLM, AutoTokenizer  # noqa: E402

from xling.export import Pretokenizer, export_model, language_inputs  # noqa: E402
from xling.model.checkpoint import load_encoder  # noqa: E402

LANGS = ("en", "fr")
WORDS = {lang: [f"{lang}{w}" for w in ("cat", "dog", "sees", "eats", "the", "big", "red", "runs", "fish", "bird")]
         for lang in LANGS}
TOKENIZE = {lang: {"moses_lang": lang, "segmenter": "none", "lowercase": False, "stanford_model": None}
            for lang in LANGS}
SCRIPTS = Path(__file__).resolve().parents[1] / "workflow" / "scripts"


def sentences(rng: random.Random, lang: str, n: int) -> list[str]:
    return [" ".join(rng.choice(WORDS[lang]) for _ in range(rng.randint(2, 12))) for _ in range(n)]


def perturb(checkpoint: Path, seed: int = 1) -> None:
    """Give every weight random values: at initialisation LayerNorms are 1/0 and biases 0, and a
    mapping that swapped two of them would still give equal outputs."""
    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    g = torch.Generator().manual_seed(seed)
    for key, value in state["model"].items():
        if value.is_floating_point():
            state["model"][key] = value + 0.2 * torch.randn(value.shape, generator=g)
    torch.save(state, checkpoint)


# the models exported: one trained before XLM's options (BERT's head, no language embeddings), one
# of XLM's model (the paper config's), one of BERT's head with language embeddings (token types)
KINDS = {
    "older": ({}, "BertForMaskedLM", None),
    "xlm": ({"language_embeddings": True, "mlm_head": "xlm", "layer_norm_eps": 1e-12, "activation_dropout": 0.0,
             "param_init": "xlm", "encoder_ffn_embed_dim": 4 * 32}, "XLMWithLMHeadModel", "langs"),
    "bert_lang": ({"language_embeddings": True}, "BertForMaskedLM", "token_type_ids"),
}


@pytest.fixture(scope="module", params=list(KINDS))
def model(request, tmp_path_factory):
    rng = random.Random(0)
    root = tmp_path_factory.mktemp(f"tiny_{request.param}")
    files = write_tiny_checkpoint(root, {lang: sentences(rng, lang, 200) for lang in LANGS}, merges=15, layers=3,
                                  separate_layers=0, **KINDS[request.param][0])
    perturb(files[0])
    return request.param, files


@pytest.fixture(scope="module")
def exported(model, tmp_path_factory):
    out = tmp_path_factory.mktemp("hf") / "default" / "en-fr"
    ckpt, bpe, dict_txt = model[1]
    record = export_model(ckpt, dict_txt, bpe, out, tokenize=TOKENIZE, info={"setting": "default"})
    return out, record


def test_export_writes_a_directory_transformers_loads(model, exported):
    out, record = exported
    _, fmt, language_input = KINDS[model[0]]
    info = json.loads((out / "xling_export.json").read_text())
    assert info == json.loads(json.dumps(record))
    assert info["format"] == fmt and info["languages"] == list(LANGS) and info["setting"] == "default"
    assert info["language_input"] == language_input and info["language_ids"] == {"en": 0, "fr": 1}
    assert (out / "model.safetensors").is_file() and (out / info["bpe"]).is_file()
    hf = AutoModelForMaskedLM.from_pretrained(out)
    assert type(hf).__name__ == fmt
    assert hf.config.num_hidden_layers == 3 and hf.config.vocab_size == info["vocab_size"]
    # the rows that pad our tables to a multiple of 64 are not exported as tokens
    ours = load_encoder(Path(info["checkpoint"]), Path(info["dictionary"])).encoder
    assert ours.vocab_rows % 64 == 0 and ours.vocab_rows > ours.vocab_size == info["vocab_size"]
    bias = hf.cls.predictions.bias if fmt == "BertForMaskedLM" else hf.pred_layer.proj.bias
    assert hf.get_input_embeddings().weight.shape[0] == info["vocab_size"] == bias.numel()
    assert len(AutoTokenizer.from_pretrained(out)) == info["vocab_size"]


@pytest.mark.parametrize("lang", LANGS)
def test_hidden_states_and_logits_equal_ours(model, exported, lang):
    out, info = exported
    ckpt, _, dict_txt = model[1]
    ours = load_encoder(ckpt, dict_txt)
    hf = AutoModelForMaskedLM.from_pretrained(out).eval()
    tokenizer = AutoTokenizer.from_pretrained(out, trust_remote_code=True)
    raw = sentences(random.Random(7), lang, 6) + [f"{lang}cat unseenword {lang}dog"]
    batch = tokenizer(raw, lang=lang, padding=True, return_tensors="pt")
    assert set(batch) == {"input_ids", "attention_mask"}  # the language is the caller's to give
    batch.update(language_inputs(info, lang, batch["input_ids"]))
    mask = batch["attention_mask"].bool()
    assert not mask.all(), "the batch should hold padding, whose handling is part of what is compared"
    with torch.no_grad():
        theirs = hf(**batch, output_hidden_states=True)
        states = ours.encode(batch["input_ids"], lang, padding_mask=~mask)
        logits = ours.encoder.output_layer(states[-1], ours.lang_id(lang))
        if info["language_input"]:  # without its language the model computes other states
            other = language_inputs(info, "en" if lang == "fr" else "fr", batch["input_ids"])
            assert not torch.allclose(hf(**{**batch, **other}).logits[mask], logits[mask], atol=1e-3)
    assert len(theirs.hidden_states) == len(states) == 4
    for layer, (a, b) in enumerate(zip(theirs.hidden_states, states)):
        torch.testing.assert_close(a[mask], b[mask], rtol=1e-5, atol=1e-5, msg=lambda m: f"layer {layer}: {m}")
    torch.testing.assert_close(theirs.logits[mask], logits[mask], rtol=1e-5, atol=1e-4)


def test_the_gpu_tests_bound_holds_here_and_fails_a_perturbed_export(model, exported):
    """tests/test_gpu.py holds our encoder and the export on CUDA to the float64 reference within
    the device's rounding, measured layer by layer (support.export_compare). On the CPU in float32
    both are within it, and an export one weight of which is off by 0.1%, or that is not given
    its language, is not."""
    out, info = exported
    for lang in LANGS:
        batch = compare.encode_batch(out, info, lang, sentences)
        reference, _ = compare.ours(model[1], lang, batch, "cpu", torch.float64)
        ours, enc = compare.ours(model[1], lang, batch, "cpu")
        roundings = compare.layer_roundings(enc, lang, batch, reference, "cpu")
        compare.assert_within_rounding("ours", ours, reference, roundings)
        compare.assert_within_rounding("the export", compare.theirs(out, batch, "cpu"), reference, roundings)
    hf = AutoModelForMaskedLM.from_pretrained(out)
    with torch.no_grad():
        next(p for n, p in hf.named_parameters() if n.endswith("weight") and p.dim() == 2 and "embed" not in n
             ).mul_(1.001)
    with pytest.raises(AssertionError, match="the export"):
        compare.assert_within_rounding("the export", compare.theirs(out, batch, "cpu", model=hf), reference,
                                       roundings)
    if info["language_input"]:
        unmarked = {k: v for k, v in batch.items() if k in ("input_ids", "attention_mask")}
        with pytest.raises(AssertionError, match="the export"):
            compare.assert_within_rounding("the export", compare.theirs(out, unmarked, "cpu"), reference, roundings)


def test_an_unpadded_checkpoint_exports_alike(tmp_path):
    """A model with one table row per entry (--vocab-multiple 1) exports to the same BERT: its
    logits are ours."""
    rng = random.Random(3)
    ckpt, bpe, dict_txt = write_tiny_checkpoint(tmp_path / "old", {lang: sentences(rng, lang, 60) for lang in LANGS},
                                                merges=10, layers=2, separate_layers=0, vocab_multiple=1)
    perturb(ckpt)
    out = tmp_path / "hf"
    record = export_model(ckpt, dict_txt, bpe, out, tokenize=TOKENIZE)
    ours = load_encoder(ckpt, dict_txt)
    assert ours.encoder.vocab_rows == ours.encoder.vocab_size == record["vocab_size"]
    hf = AutoModelForMaskedLM.from_pretrained(out).eval()
    ids = torch.tensor([[0, 5, 6, 7, 2]])
    with torch.no_grad():
        theirs = hf(input_ids=ids).logits
        logits = ours.encoder.output_layer(ours.encode(ids, "en")[-1], ours.lang_id("en"))
    torch.testing.assert_close(theirs, logits, rtol=1e-5, atol=1e-4)


def our_ids(d, out: Path, lang: str, raw: list[str]) -> list[list[int]]:
    """What pretraining and fine-tuning make of raw text: xling's tokenisation (Pretokenizer),
    the dictionary's ids, <s> ... </s>."""
    return [[d.bos(), *(d.index(t) for t in line.split()), d.eos()] for line in Pretokenizer(out, lang)(raw)]


# raw text that Moses cuts differently per language: French elisions, quotes at the end of a line
# (normalised as XLM's perl script sees a line), and characters the BPE never saw
MOSES_LINES = {lang: [f"{lang}cat n'{lang}dog l'{lang}fish , {lang}bird.", f'« {lang}cat » {lang}eats "{lang}dog."',
                      f"{lang}dog's {lang}red  {lang}big\u00a0: {lang}cat ; {lang}fish?", "Zoë (42) — ½ !"]
               for lang in LANGS}


@pytest.mark.parametrize("model", ["xlm"], indirect=True)  # one model kind: the tokenizer does not depend on it
def test_tokenizer_turns_raw_text_into_the_ids_of_pretraining(model, exported):
    """Raw text through the export's tokenizer (trust_remote_code: each language's Moses rules)
    gives the ids of our tokenisation, on the pretraining text and on lines Moses cuts per
    language, with <s> and </s> as fine-tuning adds them; transformers' own XLMTokenizer, which
    the same files give without trust_remote_code, does for English."""
    from fairseq.data import Dictionary

    out, record = exported
    _, bpe, dict_txt = model[1]
    d = Dictionary.load(str(dict_txt))
    assert record["tokenizer"]["input"] == "raw text" and record["tokenizer"]["why"] is None
    tokenizer = AutoTokenizer.from_pretrained(out, trust_remote_code=True)
    stock = AutoTokenizer.from_pretrained(out)
    assert type(tokenizer).__name__ == "XlingTokenizer" and type(stock).__name__ == "XLMTokenizer"
    for lang in LANGS:
        raw = (bpe.parent.parent / "text" / f"{lang}.train.txt").read_text(encoding="utf-8").splitlines()[:50]
        trained = (bpe.parent / f"{lang}.train.bpe").read_text(encoding="utf-8").splitlines()[:50]
        assert Pretokenizer(out, lang)(raw) == trained
        lines = raw + MOSES_LINES[lang]
        assert tokenizer(lines, lang=lang)["input_ids"] == our_ids(d, out, lang, lines)
    assert tokenizer(MOSES_LINES["en"])["input_ids"] == our_ids(d, out, "en", MOSES_LINES["en"])  # the default
    assert stock(MOSES_LINES["en"])["input_ids"] == our_ids(d, out, "en", MOSES_LINES["en"])
    # XLMTokenizer cuts French with English's rules: n'frdog as n 'frdog, not n' frdog
    line = MOSES_LINES["fr"][0]
    assert "".join(tokenizer.tokenize(line, lang="fr")).split("</w>")[1:3] == ["n'", "frdog"]
    assert "".join(stock.tokenize(line)).split("</w>")[1:3] == ["n", "'frdog"]
    assert d.unk() in our_ids(d, out, "en", ["Zoë"])[0]
    a, b = MOSES_LINES["fr"][:2]
    [ida], [idb] = our_ids(d, out, "fr", [a]), our_ids(d, out, "fr", [b])
    assert tokenizer(a, b, lang="fr")["input_ids"] == ida + idb[1:]  # <s> a </s> b </s>
    with pytest.raises(ValueError, match="'de' is not one of the model's: en, fr"):
        tokenizer("x", lang="de")


@pytest.mark.parametrize("model", ["xlm"], indirect=True)  # one model kind: the tokenizer does not depend on it
def test_a_segmented_language_reads_its_segmenters_words(model, tmp_path):
    """A language segmented before BPE (here fr, as if it were Chinese with jieba): the tokenizer
    takes its text as the segmenter returned it and normalises it as pretraining did after it."""
    from fairseq.data import Dictionary

    from xling.preprocess.segment import segmenter

    ckpt, _, dict_txt = model[1]
    tokenize = {**TOKENIZE, "fr": {**TOKENIZE["fr"], "moses_lang": "zh", "segmenter": "jieba"}}
    out = tmp_path / "hf"
    record = export_model(ckpt, dict_txt, model[1][1], out, tokenize=tokenize)
    assert "segmented with jieba" in record["tokenizer"]["languages"]["fr"]
    raw = ["frcat frdog，frfish。", "frbird「frcat」 eats  frred\u200b？"] + sentences(random.Random(2), "fr", 20)
    jieba = segmenter("jieba")
    segmented = [" ".join(jieba(" ".join(line.split()))) for line in raw]
    tokenizer = AutoTokenizer.from_pretrained(out, trust_remote_code=True)
    d = Dictionary.load(str(dict_txt))
    assert tokenizer(segmented, lang="fr")["input_ids"] == our_ids(d, out, "fr", raw)


@pytest.mark.parametrize("model", ["xlm"], indirect=True)  # one model kind: the tokenizer does not depend on it
def test_a_bpe_per_language_keeps_the_tokenizer_of_pretokenised_text(model, tmp_path):
    """No anchors and Default anchors segment each language with its own codes, which one BPE model
    cannot: their tokenizer reads Pretokenizer's output, and the export record says so."""
    from xling.bpe.build import build_bpe

    ckpt, bpe, dict_txt = model[1]
    texts = {lang: {s: bpe.parent.parent / "text" / f"{lang}.{s}.txt" for s in ("train", "valid", "test")}
             for lang in LANGS}
    build_bpe(tmp_path / "bpe", "per_language", 15, texts)
    out = tmp_path / "hf"
    record = export_model(ckpt, dict_txt, tmp_path / "bpe" / "bpe.json", out, tokenize=TOKENIZE)
    assert record["tokenizer"]["input"] == "pre-tokenised text" and "per_language" in record["tokenizer"]["why"]
    assert json.loads((out / "xling_export.json").read_text())["tokenizer"] == record["tokenizer"]
    assert not (out / "tokenization_xling.py").exists()
    tokenizer = AutoTokenizer.from_pretrained(out)
    pieces = Pretokenizer(out, "fr")(["frcat frdog"])
    from fairseq.data import Dictionary

    d = Dictionary.load(str(dict_txt))
    assert tokenizer(pieces)["input_ids"] == [[d.bos(), *map(d.index, pieces[0].split()), d.eos()]]
    assert tokenizer("never@@ seen")["input_ids"][1:3] == [d.unk(), d.unk()]


def test_a_model_with_per_language_parts_is_refused_and_nothing_is_written(tmp_path):
    rng = random.Random(0)
    ckpt, bpe, dict_txt = write_tiny_checkpoint(tmp_path / "sep", {lang: sentences(rng, lang, 50) for lang in LANGS},
                                                separate_layers=1)
    out = tmp_path / "hf" / "sep_l1_3" / "en-fr"
    with pytest.raises(InputError, match=r"checkpoint_best.pt.*layers 1-1 are separate per language"):
        export_model(ckpt, dict_txt, bpe, out, tokenize=TOKENIZE)
    assert not out.exists() and not any(p.name.startswith(".") for p in out.parent.glob("*"))


def test_missing_tokeniser_settings_fail_before_writing(model, tmp_path):
    out = tmp_path / "hf"
    ckpt, bpe, dict_txt = model[1]
    with pytest.raises(ValueError, match=r"no tokeniser settings for \['fr'\]"):
        export_model(ckpt, dict_txt, bpe, out, tokenize={"en": TOKENIZE["en"]})
    assert not out.exists()


def test_xlms_architecture_needs_its_ffn_width(tmp_path):
    rng = random.Random(0)
    ckpt, bpe, dict_txt = write_tiny_checkpoint(tmp_path / "m", {lang: sentences(rng, lang, 50) for lang in LANGS},
                                                separate_layers=0, mlm_head="xlm")  # FFN 2 x dim
    with pytest.raises(InputError, match="XLM's architecture has an FFN of 4 x 32, this model 64"):
        export_model(ckpt, dict_txt, bpe, tmp_path / "hf", tokenize=TOKENIZE)


def test_workflow_script(model, tmp_path):
    out = tmp_path / "hf" / "mono" / "en"
    ckpt, bpe, dict_txt = model[1]
    sm = SimpleNamespace(
        input=SimpleNamespace(checkpoint=str(ckpt), dictionary=str(dict_txt), bpe=str(bpe)),
        output=[str(out)], log=[str(tmp_path / "export.log")], wildcards={"setting": "default", "model": "en-fr"},
        rule="export_hf", params=SimpleNamespace(tokenize=TOKENIZE, info={"run": "t"}))
    runpy.run_path(str(SCRIPTS / "export_hf.py"), init_globals={"snakemake": sm}, run_name="__main__")
    summary = json.loads((tmp_path / "export.log").read_text().splitlines()[-1])
    assert summary["rule"] == "export_hf" and summary["format"] == KINDS[model[0]][1] and summary["layers"] == 3
    assert AutoTokenizer.from_pretrained(out).convert_tokens_to_ids("<mask>") == summary["vocab_size"] - 1


def test_subword_nmt_pieces_and_codes_in_xlms_convention(tmp_path):
    """subword-nmt marks a continued piece (ab@@), XLM a word's last one (cd</w>); its codes keep a
    repeated pair's first rank, which XLM's merges.txt then holds once."""
    from xling.export.huggingface import xlm_merges, xlm_piece

    assert [xlm_piece(s) for s in ("ab@@", "cd", "<s>", "<mask>", "@@")] == ["ab", "cd</w>", "<s>", "<mask>", ""]
    codes = tmp_path / "codes"
    codes.write_text("#version: 0.2\na b\nc d</w>\na  b\n\n")
    assert xlm_merges(codes) == ["a b", "c d</w>"]
    codes.write_text("a b\n")  # version 0.1: a separate </w>
    with pytest.raises(InputError, match="codes:1: expected '#version: 0.2'"):
        xlm_merges(codes)
