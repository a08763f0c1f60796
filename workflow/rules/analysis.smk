# Section 5 analyses of the monolingual models (paper 5.1.1, 5.1.3 and 5.2): Figure 4 (MUSE word
# translation with aligned word vectors, beside fastText), Figure 6 (Tatoeba retrieval
# after Procrustes alignment learnt on parallel rows) and Figure 7 (linear CKA of parallel
# sentence representations: monolingual, bilingual and random encoders). One job per pair; and
# the shared-space curve of the bilingual models (not in the paper). The parallel rows are
# XNLI-15way's, or the UD PUD treebanks' (analysis.parallel: pud, rule pud_rows); Figure 4's
# dictionaries MUSE's, or FreeDict's (analysis.words.dictionary: freedict, rule freedict_split),
# and its fastText vectors wiki.xx.vec, or trained on the run's corpus (analysis.words.fasttext:
# corpus, rule fasttext_vectors).
# Results: R/analysis/{parallel,words,retrieval,cka,shared_space}/...; figures by report.smk.

from snakemake.logging import logger

AN = config["analysis"]
AN_TARGETS = xcfg.analysis_targets(config)  # e.g. en_prime, fr, de, ru, zh
AN_RETRIEVAL = xcfg.retrieval_targets(config)  # Tatoeba has no en' side
SRC_AND_RETRIEVAL = [SRC, *AN_RETRIEVAL] if AN_RETRIEVAL else []  # the languages with Figure 4 vectors
EN_PRIME_SOURCE = xcfg.en_prime_source(config)  # download | backtranslation | None
EN_PRIME_TEXT = f"{R}/analysis/en_prime/xnli.15way.{xcfg.prime(SRC)}.txt"
# Section 5's parallel rows, in XNLI-15way's format: its download, or PUD's rows (rule pud_rows)
PARALLEL_ROWS = f"{R}/analysis/parallel/pud.tsv" if AN["parallel"] == "pud" else downloaded("xnli_15way")
# Figure 4's pairs: a target without a FreeDict dictionary (analysis.words.dictionary: freedict)
# is left out, as NER targets without their licensed corpus are
WORDS = AN["words"]
AN_WORDS = xcfg.figure4_targets(config)
for _lang, _why in xcfg.figure4_unavailable(config).items():
    logger.warning(f"Figure 4 {SRC}-{_lang} is left out of this run: {_why}")
FREEDICT_SPLIT = {
    "train": f"{R}/analysis/words/freedict/{SRC}-{{target}}.train.txt",
    "test": f"{R}/analysis/words/freedict/{SRC}-{{target}}.test.txt",
}
FASTTEXT_VEC = f"{R}/analysis/words/{{lang}}/fasttext.vec"


def bilingual_pair(target):
    """The pair whose bilingual model Figure 7 compares (pretrained for every Section 5 target,
    see xcfg.figure7_pairs), or None when the config trains none."""
    pair = f"{SRC}-{target}"
    return pair if pair in xcfg.figure7_pairs(config) else None


def bilingual_files(target):
    """Checkpoint, dictionary and BPE of the bilingual model of en-<target> (Figures 5, 7, 8)."""
    pair = bilingual_pair(target)
    if pair is None:
        return {}
    if xcfg.is_prime(target):  # English data under two language ids, English BPE
        return {
            "bi_checkpoint": checkpoint(AN["prime_setting"], pair, PSEED0),
            "bi_dictionary": f"{bin_dir(AN['prime_setting'], pair)}/dict.txt",
            "bi_bpe": f"{R}/bpe/mono/{SRC}/bpe.json",
        }
    s = AN["bilingual_setting"]
    return {
        "bi_checkpoint": checkpoint(s, pair, PSEED0),
        "bi_dictionary": f"{bin_dir(s, pair)}/dict.txt",
        "bi_bpe": bpe_manifest(s, pair),
    }


def en_prime_sentences():
    """Figure 7's en' sentences: a ready download, or the back-translation rule's output."""
    return downloaded(AN["en_paraphrase"]) if EN_PRIME_SOURCE == "download" else EN_PRIME_TEXT


def word_vector_files(lang):
    """Figure 4's vectors of one monolingual model (rule word_vectors)."""
    names = {
        "embedding": "embedding.npy",
        "embedding_words": "embedding.words.txt",
        "contextual": "contextual.npy",
        "contextual_words": "contextual.words.tsv",
    }
    return {k: f"{R}/analysis/words/{lang}/{v}" for k, v in names.items()}


def fasttext_vectors(lang):
    """Figure 4's baseline vectors of a language: fastText's wiki.xx.vec, or with
    analysis.words.fasttext: corpus, trained on the run's own corpus (rule fasttext_vectors)."""
    if WORDS["fasttext"] == "corpus":
        return FASTTEXT_VEC.format(lang=lang)
    return downloaded(f"fasttext_{lang}")


def word_dictionaries(target):
    """Figure 4's train and test dictionaries of en-<target>: MUSE's downloads, or with
    analysis.words.dictionary: freedict, FreeDict's split (rule freedict_split)."""
    if WORDS["dictionary"] == "freedict":
        return {f"muse_{k}": v.format(target=target) for k, v in FREEDICT_SPLIT.items()}
    return {
        "muse_train": downloaded(f"muse_{SRC}_{target}_train"),
        "muse_test": downloaded(f"muse_{SRC}_{target}_test"),
    }


def word_alignment_inputs(w):
    """Both languages' word vectors, fastText's and the MUSE-format dictionaries of one Figure 4 pair."""
    langs = (SRC, w.target)
    return {
        **{f"{lang}_{k}": v for lang in langs for k, v in word_vector_files(lang).items()},
        **{f"fasttext_{lang}": fasttext_vectors(lang) for lang in langs},
        **word_dictionaries(w.target),
    }


def retrieval_inputs(w):
    """Both monolingual models of a Section 5 job, and the segmenter where a language needs it."""
    return {**mono_model_files(SRC), **mono_model_files(w.target), **segmenter_inputs(xcfg.data_language(w.target))}


def cka_inputs(w):
    """As retrieval_inputs, plus the pair's bilingual model and, for en-en', the en' sentences."""
    d = {**retrieval_inputs(w), **bilingual_files(w.target)}
    if xcfg.is_prime(w.target):
        d["paraphrase"] = en_prime_sentences()
    return d


# Shared-space curve: a bilingual model's two languages retrieve each other (no map) at every
# checkpoint its pretraining kept (xling.analysis.shared_space)
SHARED_SPACE = AN["shared_space"]
SHARED_MODELS = [(s, p, seed) for s, p, seed in BILINGUAL if s in SHARED_SPACE["settings"] and p in PAIRS]


def shared_space_inputs(w):
    """The finished pretraining job (its fairseq/ folder holds the interval checkpoints), its
    dictionary and BPE, and the segmenter where a language needs it."""
    return {
        "done": f"{R}/pretrain/{w.setting}/{w.pair}/seed{w.pseed}/done.json",
        "dictionary": f"{bin_dir(w.setting, w.pair)}/dict.txt",
        "bpe": bpe_manifest(w.setting, w.pair),
        **segmenter_inputs(*pair_langs(w.pair)),
    }


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


if AN["parallel"] == "pud":

    rule pud_rows:
        """Section 5's parallel rows from the UD PUD treebanks: the same sentences in each language,
        aligned by sent_id in the source language's order, written in XNLI-15way's format."""
        input:
            **{f"pud_{lang}": downloaded(AN["pud"][lang]) for lang in xcfg.parallel_languages(config)},
        output:
            rows=PARALLEL_ROWS,
        log:
            f"{LOGS}/analysis/pud_rows.log",
        conda:
            "../../envs/corpus.yaml"
        threads: 1
        resources:
            **res_single("analysis"),
        script:
            "../scripts/pud_rows.py"


if WORDS["dictionary"] == "freedict":

    rule freedict_split:
        """Figure 4's train and test dictionaries of one pair: a seeded split of the headwords of
        the FreeDict dictionary codeswitch.freedict names for it, in MUSE's format."""
        input:
            dictd=lambda w: downloaded(config["codeswitch"]["freedict"][f"{SRC}-{w.target}"]),
        output:
            **FREEDICT_SPLIT,
        log:
            f"{LOGS}/analysis/words/freedict/{SRC}-{{target}}.log",
        wildcard_constraints:
            target="|".join(AN_WORDS) or "NONE",
        conda:
            "../../envs/corpus.yaml"
        threads: 1
        resources:
            **res_single("analysis"),
        params:
            train_words=WORDS["freedict_train"],
            test_words=WORDS["freedict_test"],
            seed=WORDS["freedict_seed"],
        script:
            "../scripts/freedict_split.py"


if WORDS["fasttext"] == "corpus":

    rule fasttext_vectors:
        """Figure 4's baseline vectors of one language: fastText skip-gram trained on its
        preprocessed training text, the text its monolingual MLM reads."""
        input:
            text=corpus("{lang}", "wiki", "train"),
        output:
            vec=FASTTEXT_VEC,
        log:
            f"{LOGS}/analysis/words/{{lang}}.fasttext.log",
        wildcard_constraints:
            lang="|".join([SRC, *AN_WORDS]) if AN_WORDS else "NONE",
        conda:
            "../../envs/corpus.yaml"
        # one thread: fastText's threads race, and the vectors would differ from run to run
        threads: 1
        resources:
            **res_single("analysis"),
        params:
            fasttext=WORDS["fasttext_train"],
        script:
            "../scripts/fasttext_vectors.py"


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
    """Figure 4 for one pair: word translation on MUSE's (or FreeDict's) dictionaries after aligning
    the two models' word vectors (and fastText's on the same words)."""
    input:
        unpack(word_alignment_inputs),
    output:
        result=f"{R}/analysis/words/{SRC}-{{target}}.json",
    log:
        f"{LOGS}/analysis/words/{SRC}-{{target}}.log",
    wildcard_constraints:
        target="|".join(AN_WORDS) or "NONE",
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
        way15=PARALLEL_ROWS,
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
        random_seed=AN["random_seed"],
        max_seq_len=AN["max_seq_len"],
        batch_size=AN["batch_size"],
    script:
        "../scripts/analysis_retrieval.py"


rule analysis_cka:
    input:
        unpack(cka_inputs),
        way15=PARALLEL_ROWS,
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


rule shared_space:
    """Retrieval between the two languages of one bilingual model at each kept checkpoint."""
    input:
        unpack(shared_space_inputs),
        way15=PARALLEL_ROWS,
    output:
        result=f"{R}/analysis/shared_space/{{setting}}/{{pair}}/seed{{pseed}}.json",
    log:
        f"{LOGS}/analysis/shared_space/{{setting}}/{{pair}}/seed{{pseed}}.log",
    wildcard_constraints:
        setting="|".join(SHARED_SPACE["settings"]) or "NONE",
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
        rows=SHARED_SPACE["rows"],
        norm_steps=AN["iterative_norm_steps"],
        max_seq_len=AN["max_seq_len"],
        batch_size=AN["batch_size"],
    script:
        "../scripts/shared_space.py"
