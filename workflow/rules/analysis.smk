# Section 5 analyses of the monolingual models (paper 5.1.1, 5.1.3 and 5.2): Figure 4 (MUSE word
# translation with aligned word vectors, beside fastText), Figure 6 (Tatoeba retrieval
# after Procrustes alignment learnt on XNLI-15way rows) and Figure 7 (linear CKA of parallel
# sentence representations: monolingual, bilingual and random encoders). One job per pair.
# Results: R/analysis/{retrieval,cka}/<pair>.json; figures and tables by rule analysis_report.

if EN_PRIME_SOURCE == "backtranslation":

    rule backtranslate:
        """en': the pivot column of XNLI-15way (human translations of the English rows) translated
        back into English with a pretrained MT model (paper 5.2: en-fr-en')."""
        input:
            way15=downloaded("xnli_15way"),
            model=[downloaded(rid) for rid in AN["backtranslation"]["model_files"]],
        output:
            EN_PRIME_TEXT,
        log:
            f"{LOGS}/analysis/backtranslate.log",
        conda:
            "../../envs/fairseq.yaml"
        threads: threads_of("analysis")
        resources:
            **res("analysis"),
        params:
            pivot=AN["backtranslation"]["pivot"],
            rows=AN["cka_sentences"],
            beams=AN["backtranslation"]["beams"],
            batch_size=AN["backtranslation"]["batch_size"],
            max_new_tokens=AN["backtranslation"]["max_new_tokens"],
        script:
            "../scripts/backtranslate.py"


rule word_vectors:
    """Figure 4's word vectors of one monolingual model: the embedding rows of its whole-word BPE
    entries, and per layer its contextual vectors averaged over its training text."""
    input:
        unpack(lambda w: mono_model_files(w.lang)),
        text=f"{R}/bpe/mono/{{lang}}/{{lang}}.train.bpe",
    output:
        **word_vector_files("{lang}"),
    log:
        f"{LOGS}/analysis/words/{{lang}}.log",
    wildcard_constraints:
        lang="|".join(SRC_AND_RETRIEVAL) or "NONE",
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("analysis")
    resources:
        **res("analysis"),
    params:
        lang=lambda w: w.lang,
        sentences=AN["words"]["sentences"],
        max_words=AN["words"]["max_words"],
        max_seq_len=AN["max_seq_len"],
        batch_size=AN["batch_size"],
    script:
        "../scripts/word_vectors.py"


rule analysis_words:
    """Figure 4 for one pair: MUSE word translation after aligning the two models' word vectors
    (and fastText's on the same words)."""
    input:
        unpack(word_alignment_inputs),
    output:
        result=f"{R}/analysis/words/{SRC}-{{target}}.json",
    log:
        f"{LOGS}/analysis/words/{SRC}-{{target}}.log",
    wildcard_constraints:
        target="|".join(AN_RETRIEVAL) or "NONE",
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("analysis")
    resources:
        **res("analysis"),
    params:
        pair=lambda w: f"{SRC}-{w.target}",
        fasttext_rows=AN["words"]["fasttext_rows"],
        norm_steps=AN["iterative_norm_steps"],
        csls_k=AN["words"]["csls_k"],
    script:
        "../scripts/analysis_words.py"


rule analysis_retrieval:
    input:
        unpack(retrieval_inputs),
        way15=downloaded("xnli_15way"),
        tatoeba_x=lambda w: downloaded(xcfg.tatoeba_ids(w.target)[0]),
        tatoeba_en=lambda w: downloaded(xcfg.tatoeba_ids(w.target)[1]),
    output:
        result=f"{R}/analysis/retrieval/{SRC}-{{target}}.json",
    log:
        f"{LOGS}/analysis/retrieval/{SRC}-{{target}}.log",
    wildcard_constraints:
        target="|".join(AN_RETRIEVAL) or "NONE",
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("analysis")
    resources:
        **res("analysis"),
    params:
        source=SRC,
        target=lambda w: w.target,
        tokenize=lambda w: tokenize_params(SRC, w.target),
        rows=AN["align_sentences"],
        norm_steps=AN["iterative_norm_steps"],
        max_seq_len=AN["max_seq_len"],
        batch_size=AN["batch_size"],
    script:
        "../scripts/analysis_retrieval.py"


rule analysis_cka:
    input:
        unpack(cka_inputs),
        way15=downloaded("xnli_15way"),
    output:
        result=f"{R}/analysis/cka/{SRC}-{{target}}.json",
    log:
        f"{LOGS}/analysis/cka/{SRC}-{{target}}.log",
    wildcard_constraints:
        target="|".join(AN_TARGETS) or "NONE",
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("analysis")
    resources:
        **res("analysis"),
    params:
        source=SRC,
        target=lambda w: w.target,
        tokenize=lambda w: tokenize_params(SRC, w.target),
        rows=AN["cka_sentences"],
        random_seed=AN["random_seed"],
        bootstrap=AN["cka_bootstrap"],
        max_seq_len=AN["max_seq_len"],
        batch_size=AN["batch_size"],
    script:
        "../scripts/analysis_cka.py"


rule analysis_report:
    input:
        words=[f"{R}/analysis/words/{SRC}-{t}.json" for t in AN_RETRIEVAL],
        transfer=figure5_results(),
        retrieval=[f"{R}/analysis/retrieval/{SRC}-{t}.json" for t in AN_RETRIEVAL],
        cka=[f"{R}/analysis/cka/{SRC}-{t}.json" for t in AN_TARGETS],
    output:
        **reported({k: f"{R}/report/{v}" for k, v in ANALYSIS_REPORT.items()}),
    log:
        f"{LOGS}/report/analysis.log",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    params:
        note=DEMO_NOTE,
    script:
        "../scripts/analysis_report.py"


rule shared_space:
    """Retrieval between the two languages of one bilingual model at each kept checkpoint."""
    input:
        unpack(shared_space_inputs),
        way15=downloaded("xnli_15way"),
    output:
        result=f"{R}/analysis/shared_space/{{setting}}/{{pair}}/seed{{pseed}}.json",
    log:
        f"{LOGS}/analysis/shared_space/{{setting}}/{{pair}}/seed{{pseed}}.log",
    wildcard_constraints:
        setting="|".join(SHARED["settings"]) or "NONE",
        pair="|".join(PAIRS),
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("analysis")
    resources:
        **res("analysis"),
    params:
        meta=lambda w: {"setting": w.setting, "pair": w.pair, "seed": int(w.pseed)},
        langs=lambda w: pretrain_languages(w.pair),
        tokenize=lambda w: tokenize_params(*pair_langs(w.pair)),
        rows=SHARED["rows"],
        norm_steps=AN["iterative_norm_steps"],
        max_seq_len=AN["max_seq_len"],
        batch_size=AN["batch_size"],
    script:
        "../scripts/shared_space.py"


rule shared_space_report:
    input:
        [f"{R}/analysis/shared_space/{s}/{p}/seed{seed}.json" for s, p, seed in SHARED_MODELS],
    output:
        **reported({k: f"{R}/report/{v}" for k, v in SHARED_REPORT.items()}),
    log:
        f"{LOGS}/report/shared_space.log",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    params:
        labels={s: config["settings"][s]["label"] for s in SHARED["settings"]},
        note=DEMO_NOTE,
    script:
        "../scripts/shared_space_report.py"
