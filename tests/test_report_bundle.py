"""Results bundles (xling.report.bundle): a run's report inputs as one reproducible archive, checked
against the config it is used with before anything is written."""

from __future__ import annotations

import json

import pytest
import yaml

from support.archive import members as tar_members
from support.archive import rewrite as tar_rewrite
from xling.errors import InputError
from xling.report.bundle import CONFIG, MANIFEST, check_bundle, config_digest, unpack_bundle, write_bundle

CFG = {"run_name": "t", "bundle": None, "model": {"dim": 8, "layers": 2}, "seeds": {"pretrain": [1]}}


@pytest.fixture
def run(tmp_path, monkeypatch):
    """A working directory with a few result files, as a finished run leaves them."""
    monkeypatch.chdir(tmp_path)
    files = {"results/t/finetune/default/en-fr/seed1/ner/bs32/seed1/result.json": '{"tgt_test": 12.5}\n',
             "results/t/bpe/default/en-fr/anchors.json": '{"shared": 3}\n',
             "benchmarks/t/pretrain/default/en-fr/seed1.tsv": "s\th:m:s\n1.0\t0:00:01\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path, files


def test_a_bundle_holds_the_files_the_config_and_a_manifest_of_their_digests(run):
    tmp, files = run
    manifest = write_bundle(files, "out/bundle.tar.gz", CFG, tmp, extra={"ner_unavailable": {}})
    members = tar_members(tmp / "out/bundle.tar.gz")
    assert set(members) == {MANIFEST, CONFIG, *files}
    assert yaml.safe_load(members[CONFIG]) == CFG
    stored = json.loads(members[MANIFEST])
    assert stored == manifest and stored["config_sha256"] == config_digest(CFG)
    for name, text in files.items():
        assert members[name] == text.encode()
        assert stored["files"][name]["bytes"] == len(text.encode())
    assert {"python", "snakemake", "xling"} <= set(stored["versions"]) and stored["commit"]
    # the same results give the same bytes (members sorted, times and owners fixed)
    write_bundle(reversed(list(files)), "out/again.tar.gz", CFG, tmp, extra={"ner_unavailable": {}})
    assert (tmp / "out/again.tar.gz").read_bytes() == (tmp / "out/bundle.tar.gz").read_bytes()


def test_unpacking_writes_every_file_where_the_run_had_it(run, tmp_path_factory):
    tmp, files = run
    write_bundle(files, "bundle.tar.gz", CFG, tmp)
    fresh = tmp_path_factory.mktemp("fresh")
    written = unpack_bundle(tmp / "bundle.tar.gz", {**CFG, "bundle": "bundle.tar.gz"}, fresh)
    assert sorted(p.relative_to(fresh).as_posix() for p in written) == sorted(files)
    for name, text in files.items():
        assert (fresh / name).read_text() == text


@pytest.mark.parametrize("damage, named", [
    ("altered", "result.json"), ("missing", "anchors.json"), ("extra", "stray.json"),
])
def test_a_tampered_bundle_names_the_file_at_fault(run, damage, named):
    tmp, files = run
    write_bundle(files, "bundle.tar.gz", CFG, tmp)
    archive = tmp / "bundle.tar.gz"
    members = tar_members(archive)
    if damage == "altered":
        name = next(n for n in members if n.endswith("result.json"))
        members[name] = b'{"tgt_test": 99.0}\n'
    elif damage == "missing":
        del members[next(n for n in members if n.endswith("anchors.json"))]
    else:
        members["results/t/stray.json"] = b"{}"
    tar_rewrite(archive, members)
    with pytest.raises(InputError, match=named) as err:
        check_bundle(archive, CFG)
    assert str(archive) in str(err.value)


def test_a_bundle_of_another_config_is_refused_with_the_keys_that_differ(run):
    tmp, files = run
    write_bundle(files, "bundle.tar.gz", CFG, tmp)
    other = {**CFG, "model": {"dim": 16, "layers": 2}}
    with pytest.raises(InputError, match="another config: keys model differ") as err:
        check_bundle(tmp / "bundle.tar.gz", other)
    # the file to pass: the config written beside the archive, else the one inside it
    assert "tar -xzf" in str(err.value) and "bundle/config.yaml" in str(err.value)
    (tmp / "bundle.config.yaml").write_text("run_name: t\n")
    with pytest.raises(InputError) as err:
        check_bundle(tmp / "bundle.tar.gz", other)
    assert str(err.value).endswith(f"Pass the config shipped beside it: --configfile {tmp / 'bundle.config.yaml'}")
    # every key that differs, however many, and not cut short
    many = {**CFG, **{f"key_{i:02d}_with_a_long_name": i for i in range(12)}}
    with pytest.raises(InputError) as err:
        check_bundle(tmp / "bundle.tar.gz", many)
    assert all(f"key_{i:02d}_with_a_long_name" in str(err.value) for i in range(12)) and "..." not in str(err.value)
    # the archive's own name in the config is not part of what must match
    assert check_bundle(tmp / "bundle.tar.gz", {**CFG, "bundle": "elsewhere.tar.gz"}).files == sorted(files)


def test_a_bundle_remade_from_a_bundle_keeps_the_results_commit_and_may_reword_the_report(run):
    """`snakemake --config bundle=<archive> bundle`: the same results, the report re-made by this
    checkout; the manifest keeps the commit they were computed at, the shipped config reads as a
    run's (no `bundle`), and a report-only key (its note) may differ where a results key may not."""
    tmp, files = run
    first = write_bundle(files, "first.tar.gz", CFG, tmp)
    assert first["results_commit"] == first["commit"]
    members = tar_members(tmp / "first.tar.gz")
    members[MANIFEST] = json.dumps({**json.loads(members[MANIFEST]), "commit": "0ld",
                                    "results_commit": "0ld"}).encode()
    tar_rewrite(tmp / "first.tar.gz", members)
    reworded = {**CFG, "bundle": str(tmp / "first.tar.gz"), "report": {"note": "Synthetic."}}
    assert check_bundle(tmp / "first.tar.gz", reworded).files == sorted(files)
    again = write_bundle(files, "again.tar.gz", reworded, tmp)
    assert again["results_commit"] == "0ld" and again["commit"] != "0ld"
    assert yaml.safe_load(tar_members(tmp / "again.tar.gz")[CONFIG])["bundle"] is None
    with pytest.raises(InputError, match="keys model differ"):
        check_bundle(tmp / "first.tar.gz", {**reworded, "model": {"dim": 16, "layers": 2}})


def test_what_is_not_a_bundle_is_one_clear_error(tmp_path):
    junk = tmp_path / "bundle.tar.gz"
    junk.write_bytes(b"not a gzip file")
    with pytest.raises(InputError, match="expected a results bundle"):
        check_bundle(junk, CFG)
    with pytest.raises(InputError, match="no such file"):
        check_bundle(tmp_path / "absent.tar.gz", CFG)


def test_paths_outside_the_working_directory_are_refused(run):
    tmp, files = run
    with pytest.raises(InputError, match="relative paths inside the working directory"):
        write_bundle([*files, "../escape.json"], "bundle.tar.gz", CFG, tmp)


def test_a_bundle_made_before_a_default_existed_is_read_with_it_and_a_changed_default_is_not(run, monkeypatch):
    """A checkout whose schema added a key with a default since the bundle was made fills the
    bundle's config with it too: the same config; a key whose default value changed differs."""
    from xling import config as xcfg

    tmp, files = run
    write_bundle(files, "bundle.tar.gz", CFG, tmp)
    original = xcfg.fill_defaults

    def with_new_default(cfg, *args, **kwargs):
        out = original(cfg, *args, **kwargs)
        if not args and not kwargs:  # the whole config (fill_defaults recurses into its sections)
            out.setdefault("added_later", {"value": 1})
        return out

    monkeypatch.setattr(xcfg, "fill_defaults", with_new_default)
    now = with_new_default(dict(CFG))
    assert check_bundle(tmp / "bundle.tar.gz", now).files == sorted(files)
    with pytest.raises(InputError, match="keys added_later differ"):
        check_bundle(tmp / "bundle.tar.gz", {**now, "added_later": {"value": 2}})
