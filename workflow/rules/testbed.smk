# The synthetic bilingual testbed (demo only): writes an offline mirror of every download the
# demo config lists, in the real file formats, so the download stage and all readers run as they
# would on the real data.

TESTBED_MIRROR = f"{R}/testbed/mirror"  # the demo's offline mirror of every download

if USE_TESTBED:

    rule testbed:
        output:
            directory(TESTBED_MIRROR),
        log:
            f"{LOGS}/testbed.log",
        conda:
            "../../envs/corpus.yaml"
        # its pieces are independent; nothing else can run before it
        threads: 2
        resources:
            **rule_resources(config, "download", cpus=2),
        params:
            testbed=config["testbed"],
        script:
            "../scripts/make_testbed.py"
