# Pretrained models as transformers checkpoints (BertForMaskedLM + tokenizer, xling.export): every
# model whose parts its languages all share. The Sep rows have no transformers architecture and
# stay fairseq checkpoints (xling.model.checkpoint). Output: R/hf/<setting>/<pair>/, R/hf/mono/<model>/.


def shares_everything(setting_name):
    """A row whose embeddings and layers all languages share maps onto BERT (xling.export)."""
    sep = config["settings"][setting_name]["separate"]
    return not sep["embeddings"] and int(sep["layers"]) == 0


# Exported once per model: its first seed's replicate
HF_BILINGUAL = [(s, p) for s, p, seed in BILINGUAL if seed == PSEED0 and shares_everything(s)]


def hf_export_inputs(w):
    """The pretrained model's checkpoint, dictionary and BPE (mono/<model>, or <setting>/<pair>)."""
    if w.setting == "mono":
        return {k.removeprefix(f"{w.model}_"): v for k, v in mono_model_files(w.model).items()}
    prime = xcfg.is_prime(w.model)
    return {
        "checkpoint": checkpoint(w.setting, w.model, PSEED0),
        "dictionary": f"{bin_dir(w.setting, w.model)}/dict.txt",
        "bpe": f"{R}/bpe/mono/{SRC}/bpe.json" if prime else bpe_manifest(w.setting, w.model),
    }


def hf_export_languages(w):
    return [xcfg.data_language(w.model)] if w.setting == "mono" else pair_langs(w.model)


def hf_export_targets():
    if not config["export"]["huggingface"]:
        return []
    return [f"{R}/hf/{s}/{p}" for s, p in HF_BILINGUAL] + [f"{R}/hf/mono/{m}" for m in MONO]


rule export_hf:
    input:
        unpack(hf_export_inputs),
    output:
        directory(f"{R}/hf/{{setting}}/{{model}}"),
    log:
        f"{LOGS}/export/{{setting}}/{{model}}.log",
    wildcard_constraints:
        setting="|".join(["mono", *SETTINGS]),
        model="|".join(dict.fromkeys([*(p for _, p, _ in BILINGUAL), *MONO])),
    conda:
        "../../envs/fairseq.yaml"
    threads: 1
    resources:
        # CPU only; the model's weights twice in memory, as binarisation's memory covers
        **res_single("binarize"),
    params:
        tokenize=lambda w: tokenize_params(*hf_export_languages(w)),
        info=lambda w: {"run": config["run_name"], "setting": w.setting, "model": w.model},
    script:
        "../scripts/export_hf.py"
