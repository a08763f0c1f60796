"""Section 5's parallel rows from the UD PUD treebanks (analysis.parallel: pud): the reader on the
real en/fr/de/ru PUD files in ../shared/data (the same 1,000 sentences, aligned by sent_id), rule
pud_rows' TSV read back as Section 5's jobs read 15-way rows, broken files refused with their
file and line, the config's checks, and one Figure 6 job on PUD rows through its workflow script."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from support.real_section5 import demo_with_real_section5
from support.script_run import run_script
from support.shared_data import PUD, TATOEBA, UD, needs
from xling import config as xcfg
from xling.analysis.run import fifteen_way
from xling.errors import ConfigError, InputError
from xling.taskdata.parallel_text import read_conllu_texts, read_pud

pytestmark = needs(UD)

# sent_id w01049082, the 500th sentence of every PUD treebank, as each language's '# text' gives it
W01049082 = {
    "en": "First and foremost was the provision of open space for the benefit of townspeople and local residents "
          "within an area that was being rapidly built up.",
    "fr": "La toute première était de mettre à disposition des habitants de la ville et des résidents locaux un "
          "espace ouvert dans une zone qui se développait rapidement.",
    "de": "Oberste Priorität hatte die Bereitstellung von Freiflächen für die Stadtbevölkerung und die Anwohner in "
          "einer Region, die schnell errichtet worden war.",
    "ru": "Главной необходимостью было обеспечение открытого пространства на благо горожан и местных жителей в "
          "районе, который строился быстрыми темпами.",
}


def test_the_same_sentence_in_every_language_by_sent_id():
    rows = read_pud(PUD)
    assert list(rows) == ["en", "fr", "de", "ru"]
    assert {lang: len(s) for lang, s in rows.items()} == {"en": 1000, "fr": 1000, "de": 1000, "ru": 1000}
    texts, lines = read_conllu_texts(PUD["en"])
    order = list(texts)
    assert order[499] == "w01049082" and lines["w01049082"] == 11990  # its '# sent_id' line
    assert {lang: s[499] for lang, s in rows.items()} == W01049082
    # the first language's order: Russian first gives the same rows
    assert read_pud({"ru": PUD["ru"], "en": PUD["en"]})["en"] == rows["en"]


def test_pud_rows_in_15way_format_read_as_the_jobs_read_them(tmp_path):
    """Rule pud_rows' script writes the TSV the Section 5 jobs read with fifteen_way: the first n
    rows of each language, and asking for more rows than PUD has is refused naming the file."""
    out = tmp_path / "analysis" / "parallel" / "pud.tsv"
    run_script("pud_rows", {f"pud_{lang}": str(path) for lang, path in PUD.items()}, {"rows": str(out)}, {},
               tmp_path / "log" / "pud_rows.log")
    assert out.read_text(encoding="utf-8").split("\n", 1)[0] == "en\tfr\tde\tru"
    rows = fifteen_way(out, ["ru", "en"], 1000)
    assert rows["ru"][499] == W01049082["ru"] and rows["en"][499] == W01049082["en"]
    assert fifteen_way(out, ["de"], 3)["de"] == read_pud(PUD)["de"][:3]
    with pytest.raises(InputError, match=r"pud\.tsv: expected at least 1001 sentence rows"):
        fifteen_way(out, ["en", "fr"], 1001)
    summary = json.loads((tmp_path / "log" / "pud_rows.log").read_text().strip().splitlines()[-1])
    assert summary["rows"] == 1000 and summary["languages"] == ["en", "fr", "de", "ru"]


# --- broken treebanks --------------------------------------------------------------------------


def sentences(lang: str, n: int) -> list[list[str]]:
    """The first ``n`` sentences of a PUD treebank, each its lines."""
    blocks = PUD[lang].read_text(encoding="utf-8").split("\n\n")
    return [b.split("\n") for b in blocks[:n]]


def write(path: Path, blocks: list[list[str]]) -> Path:
    path.write_text("\n\n".join("\n".join(b) for b in blocks) + "\n\n", encoding="utf-8")
    return path


def line_of(path: Path, prefix: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if line.startswith(prefix))


def raises_at(fn, path: Path, line: int, *words: str) -> None:
    with pytest.raises(InputError) as err:
        fn()
    assert (err.value.path, err.value.line) == (str(path), line), str(err.value)
    for w in words:
        assert w in str(err.value)


def test_a_sentence_missing_in_another_language_is_refused_where_the_first_has_it(tmp_path):
    en = write(tmp_path / "en.conllu", sentences("en", 3))
    fr = sentences("fr", 3)
    second = next(line for line in fr[1] if line.startswith("# sent_id"))
    fr_file = write(tmp_path / "fr.conllu", [fr[0], fr[2]])
    raises_at(lambda: read_pud({"en": en, "fr": fr_file}), en, line_of(en, second),
              f"sent_id {second.split(' = ')[1]} in {fr_file} as well")
    # and a sentence the first language does not have
    raises_at(lambda: read_pud({"fr": fr_file, "en": en}), en, line_of(en, second), "only sent_ids of")


def test_a_sentence_without_its_text_or_its_id_is_refused(tmp_path):
    fr = sentences("fr", 3)
    no_text = write(tmp_path / "no_text.conllu", [fr[0], [x for x in fr[1] if not x.startswith("# text =")], fr[2]])
    sent_id = next(x for x in fr[1] if x.startswith("# sent_id"))
    raises_at(lambda: read_conllu_texts(no_text), no_text, line_of(no_text, sent_id), "'# text = '")
    no_id = write(tmp_path / "no_id.conllu", [fr[0], [x for x in fr[1] if not x.startswith("# sent_id")], fr[2]])
    start = sum(len(b) + 1 for b in fr[:1]) + 1  # the second sentence's first line
    raises_at(lambda: read_conllu_texts(no_id), no_id, start, "'# sent_id = '")
    twice = write(tmp_path / "twice.conllu", [fr[0], fr[1], fr[1]])
    raises_at(lambda: read_conllu_texts(twice), twice, line_of(twice, sent_id) + len(fr[1]) + 1,
              "a sent_id not seen before")
    empty = tmp_path / "empty.conllu"
    empty.write_text("# newdoc id = n01001\n", encoding="utf-8")
    raises_at(lambda: read_conllu_texts(empty), empty, None, "at least one sentence")


# --- the config --------------------------------------------------------------------------------

PAPER = xcfg.load_yaml(xcfg.REPO / "config" / "config.yaml")
DEMO = xcfg.load_yaml(xcfg.REPO / "config" / "demo.yaml")


@pytest.fixture
def real(tmp_path) -> dict:
    """The demo with the real study's Section 5 (support.real_section5), valid as it is."""
    return demo_with_real_section5(tmp_path)


def problems(cfg: dict, mutate) -> list[str]:
    cfg = copy.deepcopy(cfg)
    mutate(cfg)
    with pytest.raises(ConfigError) as info:
        xcfg.validate(cfg)
    return str(info.value).splitlines()[1:]


def test_pud_row_counts_are_refused_above_its_1000_sentences(real):
    lines = problems(real, lambda c: c["analysis"].update(align_sentences=10000, cka_sentences=1001))
    assert [line.strip() for line in lines] == [
        "config key 'analysis.align_sentences': 10000 rows, but analysis.parallel: pud has 1000 parallel sentences "
        "(UD PUD); at most 1000",
        "config key 'analysis.cka_sentences': 1001 rows, but analysis.parallel: pud has 1000 parallel sentences "
        "(UD PUD); at most 1000"]
    assert problems(real, lambda c: c["analysis"]["shared_space"].update(rows=2000)) == [
        "  config key 'analysis.shared_space.rows': 2000 rows, but analysis.parallel: pud has 1000 parallel "
        "sentences (UD PUD); at most 1000"]
    # XNLI-15way's rows are not counted
    xcfg.validate(xcfg.merge(real, {"analysis": {"parallel": "xnli_15way", "align_sentences": 10000}}))


def test_every_section5_language_needs_its_pud_download(real):
    assert problems(real, lambda c: c["analysis"]["pud"].pop("de")) == [
        "  config key 'analysis.pud': no download id for 'de'; analysis.parallel: pud reads the PUD treebank of "
        "every Section 5 language (en, fr, de, ru)"]
    assert problems(real, lambda c: c["analysis"]["pud"].update(ru="ud_ru_pud")) == [
        "  config key 'analysis.pud.ru': 'ud_ru_pud' is not a key of downloads"]
    # the shared-space models' languages too (a pair whose target has no monolingual model)
    lines = problems(real, lambda c: c.update(pairs=["en-fr", "en-zh"]))
    assert lines == ["  config key 'analysis.pud': no download id for 'zh'; analysis.parallel: pud reads the PUD "
                     "treebank of every Section 5 language (en, fr, de, ru, zh)"]


def test_pud_has_no_en_prime_and_needs_no_15way(real):
    assert problems(real, lambda c: c["analysis"].update(en_paraphrase="en_paraphrase")) == [
        "  config key 'analysis.parallel': pud has no en′ (analysis.en_paraphrase and analysis.backtranslation "
        "paraphrase XNLI-15way rows); set both to null"]
    without = xcfg.merge(real, {"liu2020": {"languages": []}})  # Liu et al.'s token translation reads 15-way
    without["downloads"].pop("xnli_15way")
    xcfg.validate(copy.deepcopy(without))  # Section 5 reads PUD's rows
    # Figure 5's links are of 15-way rows whatever analysis.parallel says
    assert problems(without, lambda c: c["analysis"]["transfer"].update(tasks=["ner"])) == [
        "  config key 'downloads': the Section 5 analyses need an entry 'xnli_15way'"]
    assert "'xnli_15way'" in "\n".join(problems(without, lambda c: c["analysis"].update(parallel="xnli_15way")))


def test_without_en_prime_no_en_prime_model_is_trained(real):
    assert xcfg.monolingual_models(real) == ["en", "fr", "de", "ru"]
    assert xcfg.analysis_targets(real) == ["fr", "de", "ru"] and xcfg.figure7_pairs(real) == ["en-fr", "en-de", "en-ru"]
    assert xcfg.monolingual_models(xcfg.merge(PAPER, DEMO))[-1] == "en_prime"


# --- one Figure 6 job on PUD rows --------------------------------------------------------------


@needs(TATOEBA)
def test_a_figure6_job_learns_its_map_on_pud_rows(tmp_path):
    """workflow/scripts/pud_rows.py, then workflow/scripts/analysis_retrieval.py on its TSV with two
    tiny models (random weights; BPE learnt on PUD's own sentences): the map learnt on the first
    `rows` PUD rows, retrieval on the 1,000 Tatoeba pairs, with the random-encoder row beside it."""
    pytest.importorskip("fairseq")
    from support.tiny_checkpoint import write_tiny_checkpoint

    rows_tsv = tmp_path / "pud.tsv"
    run_script("pud_rows", {"pud_en": str(PUD["en"]), "pud_fr": str(PUD["fr"])}, {"rows": str(rows_tsv)}, {},
               tmp_path / "pud_rows.log")
    pud = read_pud({"en": PUD["en"], "fr": PUD["fr"]})
    files = {}
    for lang in ("en", "fr"):
        sample = random.Random(0).sample(pud[lang], 300)
        ckpt, bpe, dictionary = write_tiny_checkpoint(tmp_path / lang, {lang: sample}, merges=200)
        files.update({f"{lang}_checkpoint": str(ckpt), f"{lang}_dictionary": str(dictionary), f"{lang}_bpe": str(bpe)})
    out = tmp_path / "retrieval" / "en-fr.json"
    tokenize = {lang: {"moses_lang": lang, "segmenter": "none", "lowercase": False, "stanford_model": None}
                for lang in ("en", "fr")}
    inputs = {**files, "way15": str(rows_tsv), "tatoeba_x": str(TATOEBA / "tatoeba.fra-eng.fra"),
              "tatoeba_en": str(TATOEBA / "tatoeba.fra-eng.eng")}
    params = {"source": "en", "target": "fr", "tokenize": tokenize, "rows": 200, "norm_steps": 5, "random_seed": 9,
              "max_seq_len": 64, "batch_size": 64}
    run_script("analysis_retrieval", inputs, {"result": str(out)}, params, tmp_path / "retrieval.log")
    res = json.loads(out.read_text())
    assert (res["pair"], res["n_train"], res["n_test"]) == ("en-fr", 200, 1000)
    assert len(res["p_at_1"]) == len(res["random"]["p_at_1"]) == len(res["layers"]) == 3
    assert "encoding 200 15-way rows and 1000 Tatoeba pairs" in (tmp_path / "retrieval.log").read_text()
