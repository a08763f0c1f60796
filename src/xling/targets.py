"""The workflow's named targets: what each builds and how many jobs it plans, and the closest names
to a target that does not exist.

``python -m xling.targets [--configfile FILE ...]`` (``make targets``) prints one line per target
of the loaded config (Snakemake builds the plan of all of them once, in this process, and counts
each target's jobs in it: what ``snakemake -n <target>`` would run in this working directory).
The workflow's catch-all rule (``workflow/rules/targets.smk``) answers a name that is neither a
rule nor a file with :func:`unknown_target_message` instead of Snakemake's "No rule to produce".
``--finetune-rules`` prints the rules that run the config's fine-tuning jobs instead (one per
task, a job per batch size: xling.finetune.job.finetune_rules), the ``--forcerun`` list of
``make refit``.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

# The paper's Section 5 figures, as the targets wu2020_figure<N> build them
FIGURES = {
    "4": "word translation between the monolingual models, embeddings (4a) and contextual vectors (4b)",
    "5": "zero-shot NER and parsing above frozen layers of the monolingual models, aligned per layer",
    "6": "sentence retrieval between the monolingual models, per layer",
    "7": "CKA similarity per layer: monolingual, bilingual and untrained encoders",
    "8": "Figure 5's transfer with the bilingual model (appendix)",
}

# Target families whose members a misspelt name is answered with, by name pattern
FAMILIES = (("table1_row_", "table1_row_<setting>"), ("table1_pair_", "table1_pair_<src>_<tgt>"),
            ("wu2020_figure", "wu2020_figure<N>"))


@dataclass(frozen=True)
class Target:
    name: str
    section: str  # papers | ablations | steps (describe)
    what: str  # what it builds
    jobs: int | None = None  # jobs it plans to run here (None: not counted)
    planned: int | None = None  # jobs of its whole plan, done or not


def describe(name: str, config: Mapping, files: Iterable[str] = ()) -> tuple[str, str]:
    """(section, what the target builds) of a rule without wildcards; ``files``: its outputs, or
    its inputs when it has none (an aggregate target)."""
    run = f"results/{config.get('run_name', '?')}"
    settings = config.get("settings", {})
    if name == "all":
        return "papers", (f"Wu et al. 2020: Table 1 and Figure 3 beside the paper, the findings table, Figures 4-8, "
                          f"the compute ledger, the transformers exports ({run}/report/, {run}/hf/)")
    if name == "liu2020":
        return "papers", f"Liu et al. 2020: its tables and figures ({run}/report/liu2020/)"
    if name == "section5_external":
        return "papers", (f"Section 5's Figures 6 and 7 on the transformers checkpoints of analysis.external_models, "
                          f"no pretraining ({run}/report/external/)")
    if name == "report":
        return "papers", ("every table and figure of both, from their results, or from a bundle "
                          "(--config bundle=<archive>) without any upstream job")
    if name == "bundle":
        return "papers", f"the finished run's report inputs as one archive, {run}/bundle.tar.gz (+ bundle.config.yaml)"
    if m := re.fullmatch(r"table1_row_(\w+)", name):
        label = settings.get(m.group(1), {}).get("label", m.group(1))
        pairs = ", ".join(config.get("pairs", []))
        return "ablations", (f"Table 1 row {label} beside the paper: its models and fine-tuning ({pairs}), "
                             f"{run}/report/rows/{m.group(1)}.md")
    if m := re.fullmatch(r"table1_pair_([a-z]+)_([a-z]+)", name):
        pair = f"{m.group(1)}-{m.group(2)}"
        return "ablations", (f"Table 1's columns of {pair}: every row's model and fine-tuning, "
                             f"{run}/report/pairs/{pair}.md")
    if m := re.fullmatch(r"wu2020_figure(\w+)", name):
        what = FIGURES.get(m.group(1), "")
        return "ablations", f"Figure {m.group(1)} alone: {what}, {run}/report/figures/"
    files = list(files)
    shown = files[0] if files else ""
    if len(files) > 1:
        shown += f" (+{len(files) - 1} more)"
    return "steps", shown


def suggestions(name: str, names: Iterable[str], n: int = 3) -> tuple[list[str], str | None, list[str]]:
    """The ``n`` target names closest to ``name``; and when ``name`` starts like a family
    (table1_row_<setting>, table1_pair_<src>_<tgt>, wu2020_figure<N>), that family's pattern and
    the parts its members put in it."""
    names = sorted(set(names))
    close = difflib.get_close_matches(name, names, n=n, cutoff=0.6)
    for prefix, pattern in FAMILIES:
        if name.startswith(prefix):
            parts = [x.removeprefix(prefix) for x in names if x.startswith(prefix)]
            return close, pattern, sorted(parts, key=lambda x: (len(x), x) if x.isdigit() else (0, x))
    return close, None, []


def unknown_target_message(name: str, names: Iterable[str]) -> str:
    """What the workflow answers a target that is neither one of its rules nor a file it makes."""
    close, pattern, parts = suggestions(name, list(names))
    msg = f"no target {name!r} in this workflow and config."
    if close:
        msg += f" Closest: {', '.join(close)}."
    if pattern:
        msg += f" {pattern} here: {', '.join(parts) or 'none'}."
    return msg + (" `make targets` (python -m xling.targets) lists every target with what it builds; a file "
                  "the workflow makes (a path under results/) is a target too.")


def plan_counts(names: list[str], dag) -> dict[str, tuple[int, int]]:
    """Target -> (jobs to run, jobs of its plan): each target job's dependencies in one DAG."""
    by_rule = {job.rule.name: job for job in dag.jobs if job.rule.name in set(names)}
    out = {}
    for name, job in by_rule.items():
        seen, stack = set(), [job]
        while stack:
            j = stack.pop()
            if j not in seen:
                seen.add(j)
                stack.extend(dag.dependencies[j])
        out[name] = (sum(1 for j in seen if dag.needrun(j)), len(seen))
    return out


def list_targets(configfiles: list[Path], snakefile: Path, workdir: Path,
                 count: bool = True) -> tuple[list[Target], dict]:
    """Every rule without wildcards of the workflow under ``configfiles``, described, with its
    job counts in ``workdir`` (one DAG of all of them); and the workflow's resolved config."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings import types

    with SnakemakeApi(types.OutputSettings(quiet={"all"})) as api:
        wapi = api.workflow(resource_settings=types.ResourceSettings(cores=1),
                            config_settings=types.ConfigSettings(configfiles=configfiles),
                            storage_settings=types.StorageSettings(), snakefile=snakefile, workdir=workdir)
        workflow = wapi._workflow  # the parsed workflow (what --list-target-rules lists)
        rules = {r.name: r for r in workflow.rules if not r.has_wildcards()}
        counts = {}
        if count:
            dag_api = wapi.dag(types.DAGSettings(targets=set(rules)))
            with contextlib.redirect_stdout(io.StringIO()):
                dag_api.printd3dag()  # builds the DAG of every target (its JSON is not needed)
            counts = plan_counts(list(rules), workflow.dag)
        out = []
        for name, rule in rules.items():
            files = [str(f) for f in rule.output] or [str(f) for f in rule.input if isinstance(f, str)]
            section, what = describe(name, workflow.config, files)
            jobs, planned = counts.get(name, (None, None))
            out.append(Target(name, section, what, jobs, planned))
        config = dict(workflow.config)
    return out, config


SECTIONS = (("papers", "Whole studies"), ("ablations", "One part of Wu et al.'s results"),
            ("steps", "Single steps (rules without wildcards)"))


def _order(t: Target):
    m = re.fullmatch(r"wu2020_figure(\d+)\w*", t.name)
    return (t.name.split("_")[0] if not m else "wu2020", int(m.group(1)) if m else 0, t.name)


def format_targets(targets: list[Target], steps: bool = False) -> str:
    width = max(len(t.name) for t in targets if steps or t.section != "steps")
    lines = []
    papers = ["all", "liu2020", "report", "bundle", "section5_external"]
    for key, title in SECTIONS:
        chosen = [t for t in targets if t.section == key]
        if key == "steps" and not steps:
            lines.append(f"\n{title}: {len(chosen)} more (downloads, extractions, tables), listed with --steps.")
            continue
        chosen.sort(key=(lambda t: papers.index(t.name)) if key == "papers" else _order)
        lines.append(f"\n{title}:")
        for t in chosen:
            jobs = "" if t.jobs is None else (f"{t.jobs:>5} jobs" if t.jobs else f"{'done':>10}")
            lines.append(f"  {t.name:<{width}} {jobs}  {t.what}")
    return "\n".join(lines).lstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    from xling.config import REPO

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configfile", nargs="*", type=Path, default=[],
                    help="config overlays, read after config/config.yaml (e.g. config/demo.yaml)")
    ap.add_argument("--steps", action="store_true", help="also the single steps (downloads, extractions, tables)")
    ap.add_argument("--no-count", action="store_true", help="skip the job counts (no DAG: a second instead of ~10)")
    ap.add_argument("--finetune-rules", action="store_true",
                    help="print only the rules that run the config's fine-tuning jobs, on one line (make refit's "
                         "--forcerun list)")
    args = ap.parse_args(argv)
    if args.finetune_rules:
        from xling import config as xcfg
        from xling.errors import ConfigError, stop_planning
        from xling.finetune.job import finetune_rules

        files = [REPO / "config" / "config.yaml", *args.configfile]
        missing = [str(p) for p in args.configfile if not p.is_file()]
        if missing:
            raise SystemExit(f"Error: no config file {', '.join(missing)}")
        try:
            config = xcfg.load(*files)
        except ConfigError as err:
            raise stop_planning(err, files) from None
        print(" ".join(finetune_rules(config["finetune"])))
        return 0
    configfiles = [p.resolve() for p in args.configfile]
    targets, config = list_targets(configfiles, REPO / "Snakefile", Path.cwd(), count=not args.no_count)
    names = " ".join(["config/config.yaml", *map(str, args.configfile)])
    print(f"Targets of {names} (run {config['run_name']!r}): `snakemake [options] <target>`; "
          "jobs: what it would run in this directory.\n")
    sys.stdout.write(format_targets(targets, steps=args.steps))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
