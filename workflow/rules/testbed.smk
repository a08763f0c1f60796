# The synthetic bilingual testbed (demo only): writes an offline mirror of every download the
# demo config lists, in the real file formats, so the download stage and all readers run as they
# would on the real data.

if USE_TESTBED:

    rule testbed:
        output:
            directory(f"{R}/testbed/mirror"),
        log:
            f"{LOGS}/testbed.log",
        params:
            testbed=config["testbed"],
            seed=config["testbed"]["seed"],
        conda:
            "../../envs/corpus.yaml"
        threads: 1
        resources:
            **res("download"),
        script:
            "../scripts/make_testbed.py"
