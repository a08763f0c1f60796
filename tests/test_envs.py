"""The conda environments a cluster user deploys pin the same versions as pyproject.toml."""

import re
import tomllib

import yaml

from xling.config import REPO


def _pins(requirements):
    out = {}
    for req in requirements:
        m = re.match(r"^([A-Za-z0-9_.-]+)\s*==\s*([^\s;]+)$", req.strip())
        if m:
            out[m.group(1).lower()] = m.group(2)
    return out


def test_env_pins_agree_with_pyproject():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pinned = _pins(project["dependencies"])
    assert pinned["torch"] == "2.13.0"
    envs = sorted((REPO / "envs").glob("*.yaml"))
    assert envs, "no conda environments"
    checked = 0
    for env in envs:
        spec = yaml.safe_load(env.read_text())
        pip = [d for d in spec["dependencies"] if isinstance(d, dict) and "pip" in d]
        for name, version in _pins(pip[0]["pip"] if pip else []).items():
            assert name in pinned, f"{env.name}: {name} is pinned here but not in pyproject.toml"
            assert pinned[name] == version, f"{env.name}: {name}=={version}, pyproject has {pinned[name]}"
            checked += 1
        assert "python=3.11" in spec["dependencies"], env.name
    assert checked >= 10


def test_fairseq_version_agrees():
    post = (REPO / "envs" / "fairseq.post-deploy.sh").read_text()
    boot = (REPO / "scripts" / "bootstrap.sh").read_text()
    version = re.search(r"fairseq-fixed==([\d.]+)", boot).group(1)
    assert f"fairseq-fixed=={version}" in post


def test_every_script_rule_names_an_existing_conda_env():
    """`--sdm conda` deploys one small env per rule family: each rule that runs a script names one."""
    rules_dir = REPO / "workflow" / "rules"
    for smk in sorted(rules_dir.glob("*.smk")):
        text = smk.read_text()
        envs = re.findall(r'^\s+conda:\s*\n\s+"([^"]+)"', text, flags=re.M)
        assert text.count("script:") == len(envs), f"{smk.name}: a script rule without conda:"
        for env in envs:
            assert (rules_dir / env).resolve().is_file(), f"{smk.name}: {env} does not exist"
