# Section 5 analyses of the monolingual models (paper 5.1.3 and 5.2): Figure 6 (Tatoeba retrieval
# after Procrustes alignment learnt on XNLI-15way rows) and Figure 7 (linear CKA of parallel
# sentence representations: monolingual, bilingual and random encoders). One job per pair.
# Results: R/analysis/{retrieval,cka}/<pair>.json; figures and tables by rule analysis_report.

AN = config["analysis"]
AN_TARGETS = xcfg.analysis_targets(config)  # e.g. en_prime, fr, de, ru, zh
AN_RETRIEVAL = [t for t in AN_TARGETS if not xcfg.is_prime(t)]  # Tatoeba has no en' side
EN_PRIME_SOURCE = xcfg.en_prime_source(config)  # download | backtranslation | None


def mono_model_files(model):
    """A monolingual model's checkpoint, dictionary and BPE (en_prime reads English)."""
    lang = mono_data_lang(model)
    return {
        f"{model}_checkpoint": f"{R}/pretrain/mono/{model}/checkpoint_best.pt",
        f"{model}_dictionary": f"{R}/bin/mono/{lang}/dict.txt",
        f"{model}_bpe": f"{R}/bpe/mono/{lang}/bpe.json",
    }


def bilingual_pair(target):
    """The pair whose bilingual model Figure 7 compares (pretrained for every Section 5 target,
    see xcfg.figure7_pairs), or None when the config trains none."""
    pair = f"{SRC}-{target}"
    return pair if pair in xcfg.figure7_pairs(config) else None


def bilingual_files(target):
    pair = bilingual_pair(target)
    if pair is None:
        return {}
    if xcfg.is_prime(target):  # English data under two language ids, English BPE
        return {
            "bi_checkpoint": f"{R}/pretrain/{AN['prime_setting']}/{pair}/checkpoint_best.pt",
            "bi_dictionary": f"{R}/bin/mono/{pair}/dict.txt",
            "bi_bpe": f"{R}/bpe/mono/{SRC}/bpe.json",
        }
    s = AN["bilingual_setting"]
    return {
        "bi_checkpoint": f"{R}/pretrain/{s}/{pair}/checkpoint_best.pt",
        "bi_dictionary": f"{R}/bin/{canonical(s)}/{pair}/dict.txt",
        "bi_bpe": f"{R}/bpe/{canonical(s)}/{pair}/bpe.json",
    }


EN_PRIME_TEXT = f"{R}/analysis/en_prime/xnli.15way.{xcfg.prime(SRC)}.txt"


def en_prime_sentences():
    """Figure 7's en' sentences: a ready download, or the back-translation rule's output."""
    if EN_PRIME_SOURCE == "download":
        return downloaded(AN["en_paraphrase"])
    return EN_PRIME_TEXT


if EN_PRIME_SOURCE == "backtranslation":
    BT = AN["backtranslation"]

    rule backtranslate:
        """en': the pivot column of XNLI-15way (human translations of the English rows) translated
        back into English with a pretrained MT model (paper 5.2: en-fr-en')."""
        input:
            way15=downloaded("xnli_15way"),
            model=[downloaded(rid) for rid in BT["model_files"]],
        output:
            EN_PRIME_TEXT,
        log:
            f"{LOGS}/analysis/backtranslate.log",
        params:
            pivot=BT["pivot"],
            rows=AN["cka_sentences"],
            beams=BT["beams"],
            batch_size=BT["batch_size"],
            max_new_tokens=BT["max_new_tokens"],
        conda:
            "../../envs/fairseq.yaml"
        threads: threads_of("analysis")
        resources:
            **res("analysis"),
        script:
            "../scripts/backtranslate.py"


rule analysis_retrieval:
    input:
        unpack(lambda w: {**mono_model_files(SRC), **mono_model_files(w.target),
                          **segmenter_inputs(mono_data_lang(w.target))}),
        way15=downloaded("xnli_15way"),
        tatoeba_x=lambda w: downloaded(xcfg.tatoeba_ids(w.target)[0]),
        tatoeba_en=lambda w: downloaded(xcfg.tatoeba_ids(w.target)[1]),
    output:
        result=f"{R}/analysis/retrieval/{SRC}-{{target}}.json",
    wildcard_constraints:
        target="|".join(AN_RETRIEVAL) or "NONE",
    log:
        f"{LOGS}/analysis/retrieval/{SRC}-{{target}}.log",
    params:
        kind="retrieval",
        source=SRC,
        target=lambda w: w.target,
        analysis=AN,
        stanford_home=lambda w, input: input.get("stanford"),
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("analysis")
    resources:
        **res("analysis"),
    script:
        "../scripts/analysis.py"


rule analysis_cka:
    input:
        unpack(lambda w: {**mono_model_files(SRC), **mono_model_files(w.target), **bilingual_files(w.target),
                          **segmenter_inputs(mono_data_lang(w.target))}),
        way15=downloaded("xnli_15way"),
        paraphrase=lambda w: [en_prime_sentences()] if xcfg.is_prime(w.target) else [],
    output:
        result=f"{R}/analysis/cka/{SRC}-{{target}}.json",
    wildcard_constraints:
        target="|".join(AN_TARGETS) or "NONE",
    log:
        f"{LOGS}/analysis/cka/{SRC}-{{target}}.log",
    params:
        kind="cka",
        source=SRC,
        target=lambda w: w.target,
        bilingual_pair=lambda w: bilingual_pair(w.target),
        analysis=AN,
        stanford_home=lambda w, input: input.get("stanford"),
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("analysis")
    resources:
        **res("analysis"),
    script:
        "../scripts/analysis.py"


ANALYSIS_REPORT = {"fig6_png": "figure6.png", "fig6_pdf": "figure6.pdf", "fig7_png": "figure7.png",
                   "fig7_pdf": "figure7.pdf", "tables_md": "analysis.md"}


rule analysis_report:
    input:
        retrieval=[f"{R}/analysis/retrieval/{SRC}-{t}.json" for t in AN_RETRIEVAL],
        cka=[f"{R}/analysis/cka/{SRC}-{t}.json" for t in AN_TARGETS],
    output:
        **{k: f"{R}/report/{v}" for k, v in ANALYSIS_REPORT.items()},
    log:
        f"{LOGS}/report/analysis.log",
    params:
        note="Synthetic testbed (config/demo.yaml), not the paper's data." if USE_TESTBED else "",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    script:
        "../scripts/analysis_report.py"


def analysis_targets():
    return list(rules.analysis_report.output) if AN_TARGETS else []
