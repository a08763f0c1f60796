# One rule per downloaded file (resource id in config `downloads:`), so each can be fetched, pinned
# and rerun alone: `snakemake results/<run>/downloads/<id>/<file>`. Archives are extracted beside.
# With download.mirror set (the demo: the testbed's output) files come from that directory.

from urllib.parse import urlparse


def download_basename(rid):
    return Path(urlparse(config["downloads"][rid]["url"]).path).name


def downloaded(rid):
    """Path of a fetched file, or of its extracted directory for archives (what later stages read)."""
    if config["downloads"][rid].get("extract"):
        return f"{R}/downloads/{rid}/extracted"
    return f"{R}/downloads/{rid}/{download_basename(rid)}"


def mirror_input():
    """The offline mirror downloads are served from (the demo's testbed writes it), as an input."""
    mirror = config["download"]["mirror"]
    return {"mirror": mirror} if mirror else {}


for _rid, _res in config["downloads"].items():

    rule:
        name:
            f"download_{_rid}"
        input:
            **mirror_input(),
        output:
            f"{R}/downloads/{_rid}/{download_basename(_rid)}",
        log:
            f"{LOGS}/download/{_rid}.log",
        conda:
            "../../envs/corpus.yaml"
        threads: 1
        resources:
            **res_single("download"),
        params:
            url=_res["url"],
            sha256=_res["sha256"],
            retries=config["download"]["retries"],
            timeout=config["download"]["timeout_s"],
        script:
            "../scripts/download.py"

    if _res.get("extract"):

        rule:
            name:
                f"extract_{_rid}"
            input:
                archive=f"{R}/downloads/{_rid}/{download_basename(_rid)}",
            output:
                directory(f"{R}/downloads/{_rid}/extracted"),
            log:
                f"{LOGS}/download/{_rid}.extract.log",
            conda:
                "../../envs/corpus.yaml"
            threads: 1
            resources:
                **res_single("download"),
            script:
                "../scripts/extract.py"
