# One rule per downloaded file (resource id in config `downloads:`), so each can be fetched, pinned
# and rerun alone: `snakemake results/<run>/downloads/<id>/<file>`. Archives are extracted beside.
# With download.mirror set (the demo: the testbed's output) files come from that directory.

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
