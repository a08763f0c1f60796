# One rule per downloaded file (resource id in config `downloads:`), so each can be fetched, pinned
# and rerun alone: `snakemake results/<run>/downloads/<id>/<file>`. Archives are extracted beside.

from urllib.parse import urlparse

from xling.preprocess.plan import uses_stanford


def download_basename(rid):
    return Path(urlparse(config["downloads"][rid]["url"]).path).name


def segmenter_inputs(*langs):
    """``{"stanford": <extracted segmenter>}`` when any of ``langs`` is segmented with the Stanford
    segmenter (every stage that reads its raw text must segment it as the corpus was), else ``{}``."""
    return {"stanford": downloaded("stanford_segmenter")} if any(uses_stanford(config, l) for l in langs) else {}


def downloaded(rid):
    """Path of a fetched file, or of its extracted directory for archives."""
    if config["downloads"][rid].get("extract"):
        return f"{R}/downloads/{rid}/extracted"
    return f"{R}/downloads/{rid}/{download_basename(rid)}"


for _rid, _res in config["downloads"].items():

    rule:
        name:
            f"download_{_rid}"
        input:
            # In the demo the mirror is produced by the testbed rule.
            [rules.testbed.output[0]] if USE_TESTBED else [],
        output:
            f"{R}/downloads/{_rid}/{download_basename(_rid)}",
        log:
            f"{LOGS}/download/{_rid}.log",
        params:
            url=_res["url"],
            sha256=_res["sha256"],
            mirror=config["download"]["mirror"],
            retries=config["download"]["retries"],
            timeout=config["download"]["timeout_s"],
        conda:
            "../../envs/corpus.yaml"
        threads: 1
        resources:
            **res("download"),
        script:
            "../scripts/download.py"

    if _res.get("extract"):

        rule:
            name:
                f"extract_{_rid}"
            input:
                f"{R}/downloads/{_rid}/{download_basename(_rid)}",
            output:
                directory(f"{R}/downloads/{_rid}/extracted"),
            log:
                f"{LOGS}/download/{_rid}.extract.log",
            params:
                action="extract",
            conda:
                "../../envs/corpus.yaml"
            threads: 1
            resources:
                **res("download"),
            script:
                "../scripts/download.py"
