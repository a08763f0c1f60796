"""Section 5 on transformers checkpoints through Snakemake (target section5_external): tiny BERT,
CamemBERT, m-BERT and XLM-R checkpoints written offline on the testbed's own text, run on the
slice's data (no pretraining, no fine-tuning), their rows marked in the report; and the paper
config with the four public checkpoints' rows planned offline."""

import csv
import json
import shutil

import pytest
import yaml

from support.slice import snakemake
from support.tiny_transformers import make_checkpoints
from xling.config import REPO

PLANNED_RULES = {"external_retrieval", "external_cka", "external_report", "section5_external"}


def rows(models) -> dict:
    return {"bert_camembert": {"role": "monolingual", "label": "BERT + CamemBERT",
                               "models": {"en": str(models["bert_en"]), "fr": str(models["camembert_fr"])}},
            "xlmr": {"role": "multilingual", "label": "XLM-R", "path": str(models["xlmr"]), "languages": ["en", "fr"]},
            # config keys of their own (DistilBERT's n_layers, dim) and embeddings narrower than the layers (ELECTRA)
            "distilbert": {"role": "multilingual", "label": "DistilBERT", "path": str(models["distilbert"]),
                           "languages": ["en", "fr"]},
            "electra": {"role": "multilingual", "label": "ELECTRA", "path": str(models["electra"]),
                        "languages": ["en", "fr"]}}


def planned(proc) -> dict[str, int]:
    """Snakemake's job counts of a dry run (its 'Job stats' table)."""
    counts, on = {}, False
    for line in proc.stdout.splitlines():
        if line.startswith("job ") and "count" in line:
            on = True
            continue
        parts = line.split()
        if on and len(parts) == 2 and parts[1].isdigit():
            if parts[0] == "total":
                break
            counts[parts[0]] = int(parts[1])
    return counts


def test_section5_external_runs_the_rows_on_the_testbed(slice_copy):
    workdir, configs = slice_copy
    text = {lang: workdir / f"results/slice/corpus/{lang}/wiki.train.txt" for lang in ("en", "fr")}
    models = make_checkpoints(workdir / "external_models", text, every_kind=True)
    overlay = workdir / "external.yaml"
    overlay.write_text(yaml.safe_dump({"analysis": {"cka_sentences": 100, "cka_bootstrap": 20,
                                                    "external_models": rows(models)}}))
    args = ["--cores", "2", "--configfile", *configs, str(overlay), "--", "section5_external"]
    dry = snakemake(workdir, "-n", *args)
    assert dry.returncode == 0, dry.stderr[-3000:]
    # nothing but the rows' jobs: the slice's data is there, no model is trained or fine-tuned
    assert planned(dry) == {"external_retrieval": 4, "external_cka": 4, "external_report": 1,
                            "section5_external": 1}, dry.stdout[-3000:]
    proc = snakemake(workdir, *args, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = workdir / "results/slice/report/external"
    with open(report / "figure6.csv", encoding="utf-8") as fh:
        fig6 = list(csv.DictReader(fh))
    assert {r["row"] for r in fig6} == {"bert_camembert", "xlmr", "distilbert", "electra"}
    # each row beside its random encoder; source is English everywhere, and so is its model
    assert {(r["row"], r["kind"]) for r in fig6} == {
        ("bert_camembert", "monolingual"), ("bert_camembert", "random"), ("xlmr", "bilingual"), ("xlmr", "random"),
        ("distilbert", "bilingual"), ("distilbert", "random"), ("electra", "bilingual"), ("electra", "random")}
    pair_rows = [r for r in fig6 if r["row"] == "bert_camembert"]
    assert {(r["source"], r["source_model"], r["target"], r["target_model"]) for r in pair_rows} == {
        ("en", str(models["bert_en"]), "fr", str(models["camembert_fr"]))}
    digest = json.loads((workdir / "results/slice/analysis/external/xlmr/retrieval/en-fr.json").read_text())
    assert digest["external"]["models"]["fr"]["sha256"] == next(r["target_sha256"] for r in fig6 if r["row"] == "xlmr")
    assert (digest["source"], digest["target"]) == ("en", "fr") and digest["random"]["seed"] == 1001
    pair_json = json.loads((workdir / "results/slice/analysis/external/bert_camembert/retrieval/en-fr.json")
                           .read_text())
    assert pair_json["checkpoints"] == {"source": str(models["bert_en"]), "target": str(models["camembert_fr"])}
    # a multilingual model is also read without a map; a monolingual pair is two spaces, so not
    assert all(r["p_at_1_raw"] and r["p_at_1_shifted"] for r in fig6 if r["row"] == "xlmr" and r["kind"] != "random")
    assert not any(r["p_at_1_raw"] for r in fig6 if r["row"] == "bert_camembert")
    with open(report / "figure7.csv", encoding="utf-8") as fh:
        fig7 = list(csv.DictReader(fh))
    kinds = {(r["row"], r["kind"]) for r in fig7 if r["cka"]}
    assert kinds == {("bert_camembert", "monolingual"), ("bert_camembert", "random"), ("xlmr", "bilingual"),
                     ("xlmr", "random"), ("distilbert", "bilingual"), ("distilbert", "random"),
                     ("electra", "bilingual"), ("electra", "random")}
    assert all(r["low"] and r["length_controlled_cka"] for r in fig7 if r["layer"] != "average" and r["cka"])
    findings = (report / "findings.md").read_text()
    assert "XLM-R: Liu et al." in findings
    # untrained models are judged against their untrained architecture, not against chance: none
    # of them is reported to align better than untrained
    with open(report / "findings.csv", encoding="utf-8") as fh:
        claim6 = {r["claim"].split(":")[0]: r for r in csv.DictReader(fh) if ": 6. " in r["claim"]}
    assert set(claim6) == {"BERT + CamemBERT", "XLM-R", "DistilBERT", "ELECTRA"}
    assert all(r["status"] != "holds" and "untrained" in r["claim"] and "far above" not in r["claim"]
               for r in claim6.values()), claim6
    md = (report / "section5.md").read_text()
    assert str(models["xlmr"]) in md and digest["external"]["models"]["fr"]["sha256"][:12] in md
    again = snakemake(workdir, "-n", *args)
    assert again.returncode == 0 and planned(again) == {}, again.stdout[-2000:]
    # weights replaced after planning: the job that reads them refuses them (planning's sha256)
    from xling.analysis.external import row_specs

    row = {"name": "xlmr", "role": "multilingual", "label": "XLM-R", "models": {"en": str(models["xlmr"]),
           "fr": str(models["xlmr"])}, "sha256": {"en": "0" * 64, "fr": "0" * 64}}
    with pytest.raises(ValueError, match="its weights changed since planning"):
        row_specs(row, "en", "fr")


PAPER_ROWS = {"bert-base-cased": "bert_en", "camembert-base": "camembert_fr",
              "bert-base-multilingual-cased": "mbert", "xlm-roberta-base": "xlmr"}


@pytest.fixture(scope="module")
def public_names(tmp_path_factory):
    """Tiny stand-ins under the public checkpoints' names (what `huggingface-cli download` puts in a
    local directory), for the paper config's rows."""
    from support.tiny_transformers import write_texts

    root = tmp_path_factory.mktemp("hub")
    tiny = make_checkpoints(root / "tiny", write_texts(root / "text"))
    for name, made in PAPER_ROWS.items():
        shutil.copytree(tiny[made], root / name)
    return root


def test_the_paper_config_plans_the_target_offline(public_names, tmp_path):
    """docs/usage.md's rows (bert-base-cased + camembert-base, m-BERT, XLM-R on every Section 5
    language) plan the external jobs in a dry run without network; a bad row stops planning with
    one error naming its key."""
    usage = (REPO / "docs" / "usage.md").read_text(encoding="utf-8")
    block = usage.split("<!-- external-models -->")[1].split("```yaml")[1].split("```")[0]
    cfg = yaml.safe_load(block.replace("/data/hf", str(public_names)))
    (tmp_path / "rows.yaml").write_text(yaml.safe_dump(cfg))
    proc = snakemake(tmp_path, "-n", "--configfile", str(REPO / "config" / "config.yaml"), str(tmp_path / "rows.yaml"),
                     "--", "section5_external")
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = planned(proc)
    # bert + camembert: en-fr; m-BERT and XLM-R: en with fr, de, ru, zh each
    assert counts["external_retrieval"] == 9 and counts["external_cka"] == 9, counts
    assert not {r for r in counts if r.startswith(("pretrain", "finetune", "liu_", "binarize", "bpe"))}
    (public_names / "xlm-roberta-base" / "model.safetensors").unlink()
    bad = snakemake(tmp_path, "-n", "--configfile", str(REPO / "config" / "config.yaml"), str(tmp_path / "rows.yaml"),
                    "--", "section5_external")
    assert bad.returncode != 0 and "analysis.external_models.xlmr.path" in bad.stdout + bad.stderr
    assert "no weights" in bad.stdout + bad.stderr
