"""Back-translation (Figure 7's en') on a tiny, randomly initialised Marian model built here: the
model's files are passed one by one from separate folders, as the download stage lays them out.
The random model writes gibberish; these tests check the plumbing, not translation quality."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

spm = pytest.importorskip("sentencepiece")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from xling.analysis import backtranslate as bt  # noqa: E402
from xling.errors import InputError  # noqa: E402

FR = ["Le chat dort sur le canapé.", "Je voudrais un café, s'il vous plaît.", "Il pleut depuis ce matin.",
      "Nous allons au marché demain matin.", "Elle lit un livre très intéressant.",
      "Les enfants jouent dans le jardin.", "Mon frère travaille à la banque.", "Où est la gare, s'il vous plaît ?",
      "Ils ont mangé une pomme rouge.", "Le train part à huit heures.", "Cette maison est grande et belle.",
      "Tu parles français très bien.", "La réunion commence dans une heure.", "Le chien court après le chat.",
      "J'aime la musique et les livres.", "Le gouvernement a annoncé une nouvelle loi."]
EN = ["The cat sleeps on the sofa.", "I would like a coffee, please.", "It has been raining since this morning.",
      "We are going to the market tomorrow morning.", "She is reading a very interesting book.",
      "The children play in the garden.", "My brother works at the bank.", "Where is the station, please?",
      "They ate a red apple.", "The train leaves at eight o'clock.", "This house is big and beautiful.",
      "You speak French very well.", "The meeting starts in an hour.", "The dog runs after the cat.",
      "I like music and books.", "The government announced a new law."]
N_ROWS = 8
MAX_NEW = 12


def _train_spm(sentences: list[str]) -> bytes:
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(sentences), model_writer=buf, vocab_size=60,
                                   model_type="unigram", character_coverage=1.0, hard_vocab_limit=False,
                                   unk_id=0, eos_id=1, bos_id=-1, pad_id=-1, minloglevel=2, num_threads=1)
    return buf.getvalue()


def _marian_vocab(spm_files: list[Path]) -> dict[str, int]:
    """vocab.json as the Marian converter writes it: </s> 0, <unk> 1, the pieces of both
    SentencePiece models (shared), and <pad> last (it doubles as the decoder start token)."""
    vocab = {"</s>": 0, "<unk>": 1}
    for path in spm_files:
        sp = spm.SentencePieceProcessor(model_file=str(path))
        for i in range(sp.get_piece_size()):
            if not (sp.is_control(i) or sp.is_unknown(i)):
                vocab.setdefault(sp.id_to_piece(i), len(vocab))
    vocab["<pad>"] = len(vocab)
    return vocab


@pytest.fixture(scope="module")
def marian(tmp_path_factory) -> Path:
    """A saved tiny fr->en Marian model and tokenizer (model.safetensors)."""
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    root = tmp_path_factory.mktemp("marian")
    build, saved = root / "build", root / "saved"
    build.mkdir()
    (build / "source.spm").write_bytes(_train_spm(FR))
    (build / "target.spm").write_bytes(_train_spm(EN))
    vocab = _marian_vocab([build / "source.spm", build / "target.spm"])
    (build / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tokenizer = MarianTokenizer(str(build / "source.spm"), str(build / "target.spm"), str(build / "vocab.json"),
                                source_lang="fr", target_lang="en")
    pad = vocab["<pad>"]
    assert (tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.unk_token_id) == (pad, 0, 1)
    config = MarianConfig(vocab_size=len(vocab), d_model=16, encoder_layers=1, decoder_layers=1,
                          encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
                          decoder_ffn_dim=32, max_position_embeddings=128, pad_token_id=pad,
                          decoder_start_token_id=pad, eos_token_id=0, forced_eos_token_id=0, init_std=0.5,
                          bad_words_ids=[[pad]])
    torch.manual_seed(0)
    model = MarianMTModel(config)
    with torch.no_grad():  # a random model ends at once; hold </s> back so outputs have some length
        model.final_logits_bias[0, 0] = -3.0
    tokenizer.save_pretrained(saved)
    model.save_pretrained(saved)
    config_json = json.loads((saved / "config.json").read_text())
    config_json["_name_or_path"] = "tiny/opus-mt-fr-en"
    (saved / "config.json").write_text(json.dumps(config_json))
    return saved


def _downloads(saved: Path, dest: Path, names: list[str]) -> dict[str, Path]:
    """Each file in its own folder, as one download rule per file leaves them."""
    files = {}
    for name in names:
        folder = dest / f"mt_fr_en_{name.replace('.', '_')}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes((saved / name).read_bytes())
        files[name] = folder / name
    return files


@pytest.fixture(scope="module")
def files(marian, tmp_path_factory) -> dict[str, Path]:
    names = [*bt.REQUIRED_FILES, "model.safetensors", *bt.OPTIONAL_FILES]
    return _downloads(marian, tmp_path_factory.mktemp("downloads"), names)


@pytest.fixture(scope="module")
def translator(files, tmp_path_factory):
    return bt.load_translator(bt.model_dir(files, tmp_path_factory.mktemp("model")))


def _way15(root: Path, fr_rows: list[str]) -> Path:
    """A fake extracted XNLI-15way archive with columns en, fr, de."""
    path = root / "extracted" / "XNLI-15way" / "xnli.15way.orig.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [f"english {i}\t{fr}\tdeutsch {i}\n" for i, fr in enumerate(fr_rows)]
    path.write_text("en\tfr\tde\n" + "".join(rows), encoding="utf-8")
    return root / "extracted"


# --- model_dir ----------------------------------------------------------------------------------

def test_model_dir_lays_out_every_file_under_its_name(files, tmp_path):
    dest = bt.model_dir(files, tmp_path / "m")
    assert sorted(p.name for p in dest.iterdir()) == sorted(files)
    for name, path in files.items():
        assert (dest / name).read_bytes() == path.read_bytes()


def test_model_dir_missing_required_file_names_it(files, tmp_path):
    partial = {k: v for k, v in files.items() if k != "vocab.json"}
    with pytest.raises(InputError, match="vocab.json"):
        bt.model_dir(partial, tmp_path / "m")
    no_weights = {k: v for k, v in files.items() if k != "model.safetensors"}
    with pytest.raises(InputError, match="pytorch_model.bin"):
        bt.model_dir(no_weights, tmp_path / "m")


def test_model_dir_nonexistent_path_is_named(files, tmp_path):
    gone = tmp_path / "nowhere" / "target.spm"
    with pytest.raises(InputError, match="nowhere") as err:
        bt.model_dir({**files, "target.spm": gone}, tmp_path / "m")
    assert err.value.path == str(gone)


def test_loads_pytorch_model_bin_without_optional_files(marian, files, translator, tmp_path):
    """The older weights format, and only the required files (no tokenizer or generation config)."""
    from transformers import MarianMTModel

    bin_path = tmp_path / "mt_fr_en_weights" / "pytorch_model.bin"
    bin_path.parent.mkdir()
    torch.save(MarianMTModel.from_pretrained(marian).state_dict(), bin_path)
    only = {name: files[name] for name in bt.REQUIRED_FILES} | {"pytorch_model.bin": bin_path}
    tokenizer, model = bt.load_translator(bt.model_dir(only, tmp_path / "m"))
    assert not model.training
    sents = FR[:3]
    assert bt.translate(sents, tokenizer, model, max_new_tokens=MAX_NEW, progress=False) == \
        bt.translate(sents, *translator, max_new_tokens=MAX_NEW, progress=False)


# --- translate ----------------------------------------------------------------------------------

def test_batching_does_not_change_outputs(translator):
    sents = FR[:7]
    batched = bt.translate(sents, *translator, batch_size=4, max_new_tokens=MAX_NEW, progress=False)
    single = [bt.translate([s], *translator, batch_size=1, max_new_tokens=MAX_NEW, progress=False)[0]
              for s in sents]
    assert batched == single
    assert len(set(batched)) > 1 and all(batched)  # the tiny model says something, and not one thing


def test_empty_sentence_is_an_error(translator):
    with pytest.raises(ValueError, match="sentence 2"):
        bt.translate(["Le chat.", "Il pleut.", "  ", "Bonjour."], *translator, progress=False)


# --- run_backtranslation ------------------------------------------------------------------------

def test_run_writes_n_rows_in_order_and_is_deterministic(files, translator, tmp_path):
    root = _way15(tmp_path / "xnli", FR[:N_ROWS + 2])
    out = tmp_path / "out" / "en_prime.txt"
    lines = []
    stats = bt.run_backtranslation(root, "fr", N_ROWS, files, out, batch_size=3,
                                   max_new_tokens=MAX_NEW, log=lines.append)
    first = out.read_text(encoding="utf-8")
    assert first.endswith("\n")
    got = first.splitlines()
    expected = [bt.translate([s], *translator, max_new_tokens=MAX_NEW, progress=False)[0] for s in FR[:N_ROWS]]
    assert got == expected
    assert stats["rows"] == N_ROWS and stats["pivot"] == "fr" and stats["model"] == "tiny/opus-mt-fr-en"
    assert len(lines) == 2
    bt.run_backtranslation(root, "fr", N_ROWS, files, out, batch_size=5, max_new_tokens=MAX_NEW)
    assert out.read_text(encoding="utf-8") == first
    assert sorted(os.listdir(out.parent)) == ["en_prime.txt"]


def test_fewer_rows_than_n_is_an_error(files, tmp_path):
    root = _way15(tmp_path / "xnli", FR[:3])
    out = tmp_path / "en_prime.txt"
    with pytest.raises(InputError, match="at least 4"):
        bt.run_backtranslation(root, "fr", 4, files, out, max_new_tokens=MAX_NEW)
    assert not out.exists()


def test_missing_model_file_is_an_input_error(files, tmp_path):
    root = _way15(tmp_path / "xnli", FR[:3])
    out = tmp_path / "en_prime.txt"
    with pytest.raises(InputError, match="source.spm"):
        bt.run_backtranslation(root, "fr", 3, {k: v for k, v in files.items() if k != "source.spm"}, out)
    assert not out.exists()


def test_failed_translation_leaves_no_output(files, tmp_path):
    root = _way15(tmp_path / "xnli", ["Le chat dort.", "", "Il pleut."])  # an empty French cell
    out = tmp_path / "out" / "en_prime.txt"
    with pytest.raises(ValueError, match="sentence 1"):
        bt.run_backtranslation(root, "fr", 3, files, out, max_new_tokens=MAX_NEW)
    assert not out.exists()


def test_failure_while_writing_leaves_no_output(files, tmp_path, monkeypatch):
    root = _way15(tmp_path / "xnli", FR[:3])
    out = tmp_path / "out" / "en_prime.txt"
    monkeypatch.setattr(bt, "translate", lambda sents, *a, **k: ["fine", "", "fine"])
    with pytest.raises(ValueError, match="row 2"):
        bt.run_backtranslation(root, "fr", 3, files, out)
    assert not out.exists()
    assert not out.parent.exists() or os.listdir(out.parent) == []
