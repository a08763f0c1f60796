"""Our encoder and its transformers export on one batch, on any device, and the bound the GPU test
holds both to: each within the rounding of the device's own kernels, measured layer by layer.

The reference is our encoder in float64 on the CPU. On a device each model's hidden states part
from it by its kernels' rounding (TF32, fused attention), and a layer passes on what it received;
so the bound at layer l is ``support.rounding.rounding_bound`` of the sum of what each layer up to l
adds when it gets the exact input (our layer on the device, fed the float64 state before it). A model
computed otherwise (a weight mapped wrongly, a missing language input) parts from the reference
by far more than its kernels' rounding. ``tests/test_export_huggingface.py`` shows the bound fail
a perturbed export on the CPU; ``tests/test_gpu.py`` holds both models to it on CUDA."""

from __future__ import annotations

import random
from pathlib import Path

import torch

from support.rounding import rounding, rounding_bound


def encode_batch(out: Path, info: dict, lang: str, sentences) -> dict:
    """The export's tokenizer on raw text (each language's own rules) with the language inputs."""
    from transformers import AutoTokenizer

    from xling.export import language_inputs

    tokenizer = AutoTokenizer.from_pretrained(out, trust_remote_code=True)
    batch = dict(tokenizer(sentences(random.Random(7), lang, 6) + [f"{lang}cat unseenword {lang}dog"], lang=lang,
                           padding=True, return_tensors="pt"))
    batch.update(language_inputs(info, lang, batch["input_ids"]))
    return batch


def id_batch(ids: list[list[int]], pad: int) -> dict:
    """Token ids of sentences as a padded batch with its attention mask (what :func:`ours` takes)."""
    width = max(len(seq) for seq in ids)
    tokens = torch.full((len(ids), width), pad, dtype=torch.long)
    for r, seq in enumerate(ids):
        tokens[r, : len(seq)] = torch.tensor(seq)
    return {"input_ids": tokens, "attention_mask": tokens.ne(pad).long()}


def ours(model_files, lang: str, batch: dict, device, dtype=torch.float32):
    """Our encoder's hidden states and logits of ``batch``'s real tokens (CPU tensors), and the
    encoder (on ``device`` in ``dtype``)."""
    from xling.model.checkpoint import load_encoder

    ckpt, _, dict_txt = model_files
    enc = load_encoder(ckpt, dict_txt).to(device=device, dtype=dtype).eval()
    ids, mask = batch["input_ids"].to(device), batch["attention_mask"].bool().to(device)
    with torch.no_grad():
        states = enc.encode(ids, lang, padding_mask=~mask)
        logits = enc.encoder.output_layer(states[-1], enc.lang_id(lang))
    return [s[mask].cpu() for s in states] + [logits[mask].cpu()], enc


def theirs(out: Path, batch: dict, device, model=None) -> list[torch.Tensor]:
    """The export's hidden states and logits of the same tokens (CPU tensors)."""
    from transformers import AutoModelForMaskedLM

    hf = (model or AutoModelForMaskedLM.from_pretrained(out)).to(device).eval()
    mask = batch["attention_mask"].bool()
    with torch.no_grad():
        got = hf(**{k: v.to(device) for k, v in batch.items()}, output_hidden_states=True)
    return [h[mask.to(device)].cpu() for h in got.hidden_states] + [got.logits[mask.to(device)].cpu()]


def layer_roundings(enc, lang: str, batch: dict, reference: list[torch.Tensor], device) -> list[float]:
    """What each of our layers (embeddings, each Transformer layer, the head) adds on ``device``
    when fed the float64 reference's state before it: the largest difference from the reference's
    next state. ``enc``: our encoder on ``device`` in float32."""
    ids, mask = batch["input_ids"].to(device), batch["attention_mask"].bool().to(device)
    core, lid = enc.encoder, enc.lang_id(lang)
    layers = list(core.language_layers[lid]) + list(core.shared_layers)
    full = torch.zeros(*mask.shape, reference[0].shape[-1], dtype=torch.float64)
    out = []
    with torch.no_grad():
        first = enc.encode(ids, lang, padding_mask=~mask)[0][mask].cpu()  # the embeddings alone
        out.append(rounding(first, reference[0]))
        for i, layer in enumerate(layers):
            x = full.clone()
            x[mask.cpu()] = reference[i]
            y = layer(x.float().to(device), src_key_padding_mask=~mask)[mask].cpu()
            out.append(rounding(y, reference[i + 1]))
        logits = core.output_layer(reference[len(layers)].float().to(device), lid).cpu()
        out.append(rounding(logits, reference[-1]))
    return out


def assert_within_rounding(name: str, got: list[torch.Tensor], reference: list[torch.Tensor],
                           roundings: list[float], logits: bool = True) -> None:
    """``got`` (hidden states, then logits; ``logits`` False: the states alone) within the bound
    above of the float64 ``reference``; the logits carry the states' rounding and the head's own.
    A mean of states (a sentence's features) is within the bound of its states."""
    for i, (g, r) in enumerate(zip(got, reference, strict=True)):
        last = logits and i == len(got) - 1
        carried = sum(roundings) if last else sum(roundings[: i + 1])
        bound = rounding_bound(carried, float(r.abs().max()))
        apart = rounding(g, r)
        what = "logits" if last else f"layer {i}"
        assert apart <= bound, f"{name}, {what}: {apart:.3g} from the float64 reference, bound {bound:.3g}"
