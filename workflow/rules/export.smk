# Pretrained models as transformers checkpoints (BertForMaskedLM + tokenizer, xling.export): every
# model whose parts its languages all share. The Sep rows have no transformers architecture and
# stay fairseq checkpoints (xling.pretrain.loader). Output: R/hf/<setting>/<pair>/, R/hf/mono/<model>/.


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
