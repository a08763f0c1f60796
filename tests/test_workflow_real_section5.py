"""Section 5 as the real-language study reads it (support.real_section5's overlay on
config/demo.yaml): PUD's parallel rows, FreeDict's dictionaries, fastText trained on the run's
corpus. Planned: no XNLI-15way, MUSE or fastText download, no Figure 5 and no en′ job, en-de left
out of Figure 4 (FreeDict's eng-deu is not configured) with a warning. Run by Snakemake: the three
new rules on the shared files."""

from __future__ import annotations

import itertools
import re

import yaml

from support.real_section5 import overlay
from support.shared_data import ELTEC, FREEDICT, UD, needs
from support.slice import job_counts, snakemake
from xling.config import REPO

pytestmark = needs(UD, FREEDICT)
LANGS = ("en", "fr", "de", "ru")


def test_the_real_section5_plans_its_rules_and_no_download_it_replaces(tmp_path):
    (tmp_path / "real.yaml").write_text(yaml.safe_dump(overlay(tmp_path)), encoding="utf-8")
    proc = snakemake(tmp_path / "run", "-n", "--cores", "1", "--configfile", str(REPO / "config" / "demo.yaml"),
                     str(tmp_path / "real.yaml"), "--", "all")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    counts = job_counts(proc.stdout)
    # the PUD rows once, from the four treebanks, for every Figure 6 and 7 job and the shared-space curve
    assert counts["pud_rows"] == 1 and all(counts[f"download_ud_{lang}_pud_test"] == 1 for lang in LANGS)
    assert counts["analysis_retrieval"] == counts["analysis_cka"] == 3 and counts["shared_space"] == 3
    # Figure 4: en-fr and en-ru on FreeDict's split; fastText on en, fr and ru's own corpus
    assert counts["freedict_split"] == counts["analysis_words"] == 2 and counts["fasttext_vectors"] == 3
    assert counts["extract_freedict_eng_fra"] == counts["extract_freedict_eng_rus"] == 1
    assert "Figure 4 en-de is left out of this run: codeswitch.freedict has no en-de dictionary" in out
    # nothing of what they replace, no Figure 5, no en′ (nor its monolingual model)
    replaced = [r for r in counts if re.match(r"(download|extract)_(xnli_15way|muse_|fasttext_|en_paraphrase)", r)]
    assert replaced == []
    assert not {"word_links", "contextual_maps", "transfer", "build_fast_align", "backtranslate",
                "binarize_prime_pair"} & set(counts)
    assert counts["pretrain_mono"] == 4 and "en_prime" not in proc.stdout
    inputs = _inputs(proc.stdout)
    for job in ("retrieval/en-de.json", "cka/en-ru.json", "shared_space/default/en-fr/seed1.json"):
        assert "results/demo/analysis/parallel/pud.tsv" in inputs[f"results/demo/analysis/{job}"], job
    assert inputs["results/demo/analysis/parallel/pud.tsv"] == {
        f"results/demo/downloads/ud_{lang}_pud_test/{lang}_pud-ud-test.conllu" for lang in LANGS}
    words = "results/demo/analysis/words"
    assert {f"{words}/freedict/en-ru.train.txt", f"{words}/freedict/en-ru.test.txt", f"{words}/en/fasttext.vec",
            f"{words}/ru/fasttext.vec"} <= inputs[f"{words}/en-ru.json"]
    assert inputs["results/demo/analysis/words/ru/fasttext.vec"] == {"results/demo/corpus/ru/wiki.train.txt"}


def _inputs(dry_run: str) -> dict[str, set[str]]:
    """Each planned job's first output -> its inputs, from a dry run's job blocks."""
    out = {}
    for block in dry_run.split("\nrule ")[1:]:
        fields = dict(re.findall(r"^\s+(input|output): (.*)$", block, re.M))
        if "output" in fields:
            out[fields["output"].split(", ")[0]] = set(fields.get("input", "").split(", ")) - {""}
    return out


@needs(ELTEC)
def test_the_real_section5_rules_run_on_the_shared_files(tmp_path):
    """pud_rows, freedict_split and fasttext_vectors run by Snakemake: the downloads fetched from
    their file:// URLs (no mirror) and extracted, English's corpus a tokenised novel placed where
    the corpus stage writes it (the rules that would make it are not allowed to run)."""
    from xling.analysis.vec import read_vec
    from xling.codeswitch.dictionary import read_muse
    from xling.preprocess.tei import tei_units
    from xling.preprocess.tokenize import LineTokenizer, TokenizeSettings

    cfg = overlay(tmp_path)
    cfg["download"] = {"mirror": None}
    cfg["analysis"]["words"]["fasttext_train"] = {"dim": 32, "bucket": 50_000}  # small for a test
    (tmp_path / "real.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    run, r = tmp_path / "run", "results/demo"
    corpus = run / r / "corpus" / "en" / "wiki.train.txt"
    corpus.parent.mkdir(parents=True)
    tok = LineTokenizer(TokenizeSettings("en"))
    units = itertools.islice(tei_units(ELTEC / "eng" / "ENG18400_Trollope.xml"), 600)
    corpus.write_text("".join(tok(u) + "\n" for u in units), encoding="utf-8")
    allowed = ["pud_rows", "freedict_split", "fasttext_vectors", *(f"download_{rid}" for rid in cfg["downloads"]),
               *(f"extract_{rid}" for rid, d in cfg["downloads"].items() if d.get("extract"))]
    split = [f"{r}/analysis/words/freedict/en-{t}.{part}.txt" for t in ("fr", "ru") for part in ("train", "test")]
    targets = [f"{r}/analysis/parallel/pud.tsv", f"{r}/analysis/words/en/fasttext.vec", *split]
    proc = snakemake(run, "--cores", "2", "--configfile", str(REPO / "config" / "demo.yaml"),
                     str(tmp_path / "real.yaml"), "--allowed-rules", *allowed, "--", *targets)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (run / targets[0]).read_text(encoding="utf-8").split("\n", 1)[0] == "en\tfr\tde\tru"
    assert len((run / targets[0]).read_text(encoding="utf-8").splitlines()) == 1 + 1000
    words, vectors = read_vec(run / targets[1])
    assert vectors.shape == (len(words), 32) and words[0] in {",", "the", "."}
    sizes = {t: (len({a for a, _ in read_muse(run / r / f"analysis/words/freedict/en-{t}.train.txt")}),
                 len({a for a, _ in read_muse(run / r / f"analysis/words/freedict/en-{t}.test.txt")}))
             for t in ("fr", "ru")}
    assert sizes == {"fr": (1000, 400), "ru": (1000, 400)}
