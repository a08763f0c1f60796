"""m-BERT's code paths on a transformers BERT, with a tiny random model and WordPiece vocabulary
built here: the tokenizer's view as a dictionary, token translation (every score written, equal to
the shift applied by hand), word retrieval (vectors equal to BERT's own states averaged by hand) and
Table 4's fine-tuning."""

from __future__ import annotations

import json

import pytest
import torch

from xling.analysis.language_shift import language_means, mean_difference, translate_tokens
from xling.liu.mbert import BERT_FILES, run_mbert_translation
from xling.metrics.translation import bleu1
from xling.model.huggingface import load_masked_lm

EN = ["the cat sees the dog .", "a dog runs .", "the small cat sleeps .", "we see a cat ."]
FR = ["le chat voit le chien .", "un chien court .", "le petit chat dort .", "nous voyons un chat ."]


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    d = tmp_path_factory.mktemp("mbert")
    words = sorted({w for line in EN + FR for w in line.split()})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words, "##s", "##e"]
    (d / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=32)
    BertForMaskedLM(cfg).save_pretrained(d)
    BertTokenizer(str(d / "vocab.txt"), do_lower_case=False).save_pretrained(d)
    return {p.name: p for p in d.iterdir() if p.is_file()}


def texts(tmp_path):
    paths = {}
    for lang, lines in (("en", EN), ("fr", FR)):
        paths[lang] = tmp_path / f"{lang}.train.txt"
        paths[lang].write_text("\n".join(lines * 3) + "\n", encoding="utf-8")
    return paths


def test_the_tokenizer_seen_as_a_dictionary(tiny_bert, tmp_path):
    from xling.analysis.backtranslate import model_dir

    _, d = load_masked_lm(model_dir(tiny_bert, tmp_path / "m", BERT_FILES, "BERT"))
    assert (d[d.bos()], d[d.eos()], d[d.pad()]) == ("[CLS]", "[SEP]", "[PAD]")
    assert d[d.index("chat")] == "chat" and d.index("zebra") == d.index("[UNK]")
    assert d.pieces("le chat") == ["le", "chat"] and len(d) == len(d.tokenizer)


def test_every_direction_layer_and_alpha_is_scored(tiny_bert, tmp_path):
    out = tmp_path / "mbert.json"
    res = run_mbert_translation(tiny_bert, texts(tmp_path), {"en": EN, "fr": FR}, [("en", "fr"), ("fr", "en")], None,
                                [1.0, 2.0], 8, out, {"model": "mbert", "size": None})
    assert json.loads(out.read_text()) == res
    assert res["layers"] == 3 and res["rows"] == 4 and res["model"] == "mbert" and res["size"] is None
    # one unshifted score per direction, then every layer 1..3 x alpha
    assert len(res["scores"]) == 2 * (1 + 3 * 2)
    assert {(s["layer"], s["alpha"]) for s in res["scores"] if s["alpha"] > 0} == {(l, a) for l in (1, 2, 3)
                                                                                  for a in (1.0, 2.0)}
    # V_lang: the pieces of the rows translated
    assert res["token_sets"] == "evaluated"
    assert res["vocab_sizes"] == {"en": len({w for s in EN for w in s.split()}),
                                  "fr": len({w for s in FR for w in s.split()})}
    with pytest.raises(ValueError, match="layers \\[4\\] outside 1..3"):
        run_mbert_translation(tiny_bert, texts(tmp_path), {"en": EN, "fr": FR}, [("en", "fr")], [4], [1.0], 8,
                              tmp_path / "x.json", {"model": "mbert", "size": None})
    assert not (tmp_path / "x.json").exists()


def test_token_sets_are_those_of_the_evaluated_rows(tiny_bert, tmp_path):
    """Table 3 counts m-BERT's WordPieces of the evaluated sentences, not of the lines the means read."""
    rows = {"en": EN[:2], "fr": FR[:2]}
    res = run_mbert_translation(tiny_bert, texts(tmp_path), rows, [("en", "fr")], [1], [1.0], 8,
                                tmp_path / "e.json", {"model": "mbert", "size": None})
    sets = {lang: {w for s in r for w in s.split()} for lang, r in rows.items()}
    assert res["vocab_sizes"] == {lang: len(v) for lang, v in sets.items()}
    assert res["vocab_overlap"] == {"en-fr": len(sets["en"] & sets["fr"])}
    sample = run_mbert_translation(tiny_bert, texts(tmp_path), rows, [("en", "fr")], [1], [1.0], 8,
                                   tmp_path / "s.json", {"model": "mbert", "size": None}, token_sets="training")
    assert sample["token_sets"] == "training"
    assert sample["vocab_sizes"] == {"en": len({w for s in EN for w in s.split()}),
                                     "fr": len({w for s in FR for w in s.split()})}
    with pytest.raises(ValueError, match="token_sets must be"):
        run_mbert_translation(tiny_bert, texts(tmp_path), rows, [("en", "fr")], [1], [1.0], 8, tmp_path / "x.json",
                              {}, token_sets="vocabulary")


def test_scores_are_the_shift_applied_by_hand(tiny_bert, tmp_path):
    """en -> fr at layer 2, alpha 2: the means of [CLS] line [SEP] over the first 8 sample lines,
    the shifted argmax of every row's own positions, BLEU-1 against the French rows."""
    from xling.analysis.backtranslate import model_dir

    res = run_mbert_translation(tiny_bert, texts(tmp_path), {"en": EN, "fr": FR}, [("en", "fr")], [2], [2.0], 8,
                                tmp_path / "r.json", {"model": "mbert", "size": None})
    model, d = load_masked_lm(model_dir(tiny_bert, tmp_path / "m", BERT_FILES, "BERT"))
    tok = d.tokenizer

    def batch(lines):
        enc = tok(lines, padding=True, return_tensors="pt")
        return enc["input_ids"], enc["attention_mask"]

    sample = {"en": (EN * 3)[:8], "fr": (FR * 3)[:8]}
    shift = mean_difference(language_means(model, [batch(sample["en"])]), language_means(model, [batch(sample["fr"])]))
    hyps = []
    for line in EN:
        ids, mask = batch([line])
        pred = translate_tokens(model, ids, mask, 2, 2.0, shift)[0, 1:-1]
        hyps.append(" ".join(tok.convert_ids_to_tokens(pred.tolist())))
    ours = next(s for s in res["scores"] if s["alpha"] == 2.0)
    assert ours["bleu1"] == pytest.approx(bleu1(hyps, FR))


def test_word_retrieval_on_bert(tiny_bert, tmp_path):
    """m-BERT's row of Figures 1 and 3: a word's vector per layer is the mean over its occurrences
    of the mean of its WordPieces' states, each line read alone as [CLS] pieces [SEP] by BERT itself;
    the MRR the job writes is the dictionary retrieval of those vectors."""
    from xling.analysis.backtranslate import model_dir
    from xling.analysis.word_retrieval import dictionary_retrieval
    from xling.liu.retrieval_job import run_liu_retrieval

    en = ["the cats see the dog .", "a dog runs .", "the small cat sleeps ."]  # cats = cat ##s
    fr = ["le chat voit les chiens .", "un chien court .", "le petit chat dort ."]  # chiens = chien ##s
    paths = {}
    for lang, lines in (("en", en), ("fr", fr)):
        paths[lang] = tmp_path / f"{lang}.txt"
        paths[lang].write_text("\n".join(lines * 2) + "\n", encoding="utf-8")
    (tmp_path / "en-fr.txt").write_text("cat chat\ndog chien\ncats chats\nsmall petit\nthe le\n")
    res = run_liu_retrieval({"kind": "mbert", "files": tiny_bert}, paths, {"fr": tmp_path / "en-fr.txt"}, "en", 4,
                            100, tmp_path / "r.json", {"model": "mbert", "size": None}, batch_size=2)
    assert res["kind"] == "mbert" and res["size"] is None and res["layers"] == 1 + 3

    model, d = load_masked_lm(model_dir(tiny_bert, tmp_path / "m", BERT_FILES, "BERT"))
    assert d.pieces("cats") == ["cat", "##s"] and d.pieces("chiens") == ["chien", "##s"]

    def by_hand(lines):
        sums, counts = {}, {}
        for line in lines:
            pieces = [d.pieces(w) for w in line.split()]
            ids = [d.bos(), *(d.index(p) for word in pieces for p in word), d.eos()]
            with torch.no_grad():
                states = torch.stack(model.bert(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states)
            at = 1
            for word, cut in zip(line.split(), pieces):
                vec = states[:, 0, at : at + len(cut)].mean(dim=1)
                sums[word] = sums.get(word, 0) + vec
                counts[word] = counts.get(word, 0) + 1
                at += len(cut)
        words = sorted(sums)
        return [w.lower() for w in words], torch.stack([sums[w] / counts[w] for w in words], dim=1).numpy()

    src, tgt = by_hand((en * 2)[:4]), by_hand((fr * 2)[:4])
    pairs = [tuple(line.split()) for line in (tmp_path / "en-fr.txt").read_text().splitlines()]
    expected = [dictionary_retrieval(pairs, (src[0], src[1][i]), (tgt[0], tgt[1][i])) for i in range(4)]
    fr_res = res["languages"]["fr"]
    assert fr_res["mrr"] == pytest.approx([e["mrr"] for e in expected], abs=1e-5)
    assert fr_res["pairs"] == 4 and fr_res["missing_pairs"] == 1  # "chats" is not in the first 4 lines


def write_xnli(root):
    import random

    from support.xnli_files import write_xnli_files

    words = {lang: sorted({w for line in lines for w in line.split()}) for lang, lines in (("en", EN), ("fr", FR))}
    return write_xnli_files(root, words, {"train": 30, "dev": 12, "test": 12}, random.Random(0))


def test_bert_encoder_reads_pairs_as_bert_does(tiny_bert, tmp_path):
    from xling.analysis.backtranslate import model_dir
    from xling.liu.xnli_job import freeze_below
    from xling.model.huggingface import TransformersEncoder

    bert, d = load_masked_lm(model_dir(tiny_bert, tmp_path / "m", BERT_FILES, "BERT"))
    enc = TransformersEncoder(bert, d, ["en", "fr"])
    ids = [d.bos(), d.index("le"), d.eos(), d.index("chat"), d.index("dort"), d.eos(), d.pad()]
    tokens = torch.tensor([ids])
    states = enc.encode(tokens, "fr")
    assert len(states) == 1 + 3 and states[-1].shape == (1, 7, 16)
    real = tokens.ne(d.pad())
    segment = torch.tensor([[0, 0, 0, 1, 1, 1, 0]])
    expected = bert.bert(input_ids=tokens, attention_mask=real.long(), token_type_ids=segment,
                         output_hidden_states=True).hidden_states[-1]
    assert torch.equal(states[-1], expected)
    trainable = {id(p) for p in freeze_below(enc, 1, "en")}
    assert trainable == {id(p) for block in bert.bert.encoder.layer[1:] for p in block.parameters()}


def test_table4_on_bert(tiny_bert, tmp_path):
    from xling.finetune import FinetuneJob, Hyperparameters
    from xling.liu.mbert import run_mbert_xnli

    files = write_xnli(tmp_path)
    job = FinetuneJob(task="xnli", src_lang="en", tgt_lang="en",
                      hp=Hyperparameters(batch_size=8, encoder_lr=1e-3, classifier_lr=1e-2), epochs=2, seed=1,
                      max_seq_len=24, warmup_fraction=0.0)
    dev = {lang: files[lang, "dev"] for lang in ("en", "fr")}
    test = {lang: files[lang, "test"] for lang in ("en", "fr")}
    res = run_mbert_xnli(job, tiny_bert, files["en", "train"], dev, test, texts(tmp_path), freeze=1, alphas=[1.0],
                         n_sentences=8, out_json=tmp_path / "x.json", meta={"model": "mbert", "size": None},
                         all_layers=True)
    assert res["layers"] == 3 and res["freeze_layers"] == 1 and res["size"] is None and res["sentences"] == 8
    fr = res["languages"]["fr"]
    assert set(fr["dev_by_alpha"]) == {"0", "1"} and fr["examples"] == {"dev": 12, "test": 12}
    assert all(0.0 <= fr[k] <= 100.0 for k in ("test", "mds_test", "all_layers_test"))
    assert json.loads((tmp_path / "x.json").read_text()) == res


def test_the_rules_scripts_run_on_the_downloaded_files(tiny_bert, tmp_path):
    """liu_translation_mbert, liu_xnli_mbert and liu_retrieval_mbert, given m-BERT's files as the download rules leave
    them (one file each) and their params as the rules build them."""
    from support.script_run import run_script

    model = []
    for name, path in tiny_bert.items():  # downloads/<id>/<file name>
        dest = tmp_path / "downloads" / name.replace(".", "_") / name
        dest.parent.mkdir(parents=True)
        dest.write_bytes(path.read_bytes())
        model.append(str(dest))
    way15 = tmp_path / "XNLI-15way" / "xnli.15way.orig.tsv"
    way15.parent.mkdir()
    way15.write_text("en\tfr\n" + "".join(f"{e}\t{f}\n" for e, f in zip(EN, FR)), encoding="utf-8")
    text = texts(tmp_path)
    common = {"alphas": [1.0], "sentences": 8, "batch_size": 4}
    run_script("liu_translation_mbert",
               {"model": model, "way15": str(way15.parent), **{f"text_{l}": str(p) for l, p in text.items()}},
               {"result": str(tmp_path / "tr.json")},
               {"meta": {"model": "mbert", "size": None}, "directions": [["en", "fr"]], "rows": 4,
                "max_seq_len": 32, "token_sets": "evaluated", **common}, tmp_path / "tr.log")
    tr = json.loads((tmp_path / "tr.json").read_text())
    assert tr["layers"] == 3 and tr["rows"] == 4 and len(tr["scores"]) == 1 + 3 and tr["token_sets"] == "evaluated"
    files = write_xnli(tmp_path)
    job = {"task": "xnli", "src_lang": "en", "tgt_lang": "en", "hp": {"batch_size": 8, "encoder_lr": 1e-3,
           "classifier_lr": 1e-2}, "epochs": 1, "seed": 1, "max_seq_len": 24, "warmup_fraction": 0.0}
    run_script("liu_xnli_mbert",
               {"model": model, "train": str(files["en", "train"]),
                **{f"{s}_{l}": str(files[l, s]) for l in ("en", "fr") for s in ("dev", "test")},
                **{f"text_{l}": str(p) for l, p in text.items()}},
               {"result": str(tmp_path / "x.json")},
               {"meta": {"model": "mbert", "size": None}, "job": job, "languages": ["en", "fr"], "freeze": 1,
                "all_layers": False, **common}, tmp_path / "x.log")
    xnli = json.loads((tmp_path / "x.json").read_text())
    assert set(xnli["languages"]) == {"en", "fr"} and xnli["freeze_layers"] == 1
    assert '"rule": "liu_xnli_mbert"' in (tmp_path / "x.log").read_text()  # the job's summary line
    muse = tmp_path / "en-fr.txt"
    muse.write_text("cat chat\ndog chien\n")
    run_script("liu_retrieval",
               {"model": model, "dict_fr": str(muse), **{f"text_{l}": str(p) for l, p in text.items()}},
               {"result": str(tmp_path / "ret.json")},
               {"kind": "mbert", "src": "en", "langs": ["fr"], "meta": {"model": "mbert", "size": None},
                "sentences": 8, "max_words": 100, "max_seq_len": 32, "batch_size": 4}, tmp_path / "ret.log")
    ret = json.loads((tmp_path / "ret.json").read_text())
    assert ret["model"] == "mbert" and ret["kind"] == "mbert" and ret["languages"]["fr"]["pairs"] == 2
