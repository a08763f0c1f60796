"""One default per config key: the schema's. Every optional key of xling/config.schema.yaml gets
its default there and nowhere else in src/xling: no ``.get("<key>", <value>)``, no
``getattr(x, "<key>", <value>)`` (nor ``getattr(...) or <value>``), and no field of a type that
mirrors a config section (one with ``from_section``/``from_params``) with a default of its own.
A config reaches the code with its defaults filled in (xling.config.validate), a section's type
with the schema's (xling.config.section_defaults)."""

from __future__ import annotations

import ast
from pathlib import Path

from xling.config import REPO, schema, section_defaults

SRC = REPO / "src" / "xling"
# fairseq's names of the model keys (xling.pretrain.encoder.model_args)
ARG_NAMES = {"encoder_layers": "layers", "encoder_embed_dim": "dim", "encoder_ffn_embed_dim": "ffn_dim",
             "encoder_attention_heads": "heads", "param_init": "init", "activation_fn": "activation",
             "max_positions": "tokens_per_sample"}
SECTION_TYPES = ("from_section", "from_params")


def optional_keys() -> set[str]:
    """The name of every schema key with a default, at any depth."""
    root, out = schema(), set()

    def walk(node):
        if not isinstance(node, dict):
            return
        for name, sub in (node.get("properties") or {}).items():
            if isinstance(sub, dict) and "default" in sub:
                out.add(name)
            walk(sub)
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"])
        for sub in node.get("oneOf", []) + node.get("anyOf", []):
            walk(sub)
    walk(root)
    return out


def a_value(node: ast.AST) -> bool:
    """A literal a default would be: not None, not an empty container (an absent section)."""
    if isinstance(node, ast.Constant):
        return node.value is not None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return bool(node.elts)
    if isinstance(node, ast.Dict):
        return bool(node.keys)
    return False


def defaulted(value: ast.AST) -> bool:
    """A field's default: a literal, or a call given one (``field(default=...)``, a helper's)."""
    if a_value(value) or (isinstance(value, ast.Constant) and value.value is None):
        return True
    return isinstance(value, ast.Call) and (any(a_value(a) for a in value.args) or any(
        k.arg in ("default", "default_factory") for k in value.keywords))


def fallbacks(tree: ast.AST, keys: set[str]) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f, args = node.func, node.args
            if (isinstance(f, ast.Attribute) and f.attr == "get" and len(args) == 2
                    and isinstance(args[0], ast.Constant) and args[0].value in keys and a_value(args[1])):
                out.append((node.lineno, f'.get("{args[0].value}", ...)'))
            if (isinstance(f, ast.Name) and f.id == "getattr" and len(args) == 3 and isinstance(args[1], ast.Constant)
                    and ARG_NAMES.get(args[1].value, args[1].value) in keys and a_value(args[2])):
                out.append((node.lineno, f'getattr(..., "{args[1].value}", ...)'))
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            first = node.values[0]
            if (isinstance(first, ast.Call) and isinstance(first.func, ast.Name) and first.func.id == "getattr"
                    and len(first.args) >= 2 and isinstance(first.args[1], ast.Constant)):
                key = ARG_NAMES.get(first.args[1].value, first.args[1].value)
                if key in keys and any(a_value(v) for v in node.values[1:]):
                    out.append((node.lineno, f'getattr(..., "{first.args[1].value}") or ...'))
    sections = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)
                and any(isinstance(m, ast.FunctionDef) and m.name in SECTION_TYPES for m in n.body)}
    for node in ast.walk(tree):  # a type with such a constructor, or built on one of this module's
        if isinstance(node, ast.ClassDef) and (node.name in sections or any(
                isinstance(b, ast.Name) and b.id in sections for b in node.bases)):
            for item in node.body:
                if (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                        and item.target.id in keys and item.value is not None and defaulted(item.value)):
                    out.append((item.lineno, f"{node.name}.{item.target.id} = ..."))
    return sorted(out)


def test_no_optional_key_has_a_default_outside_the_schema():
    keys = optional_keys()
    assert {"mlm_head", "init", "vocab_multiple", "layer_norm_eps", "in_language_random_words",
            "eval_batch_size"} <= keys
    found = [f"{path.relative_to(REPO)}:{line}: {what}" for path in sorted(SRC.rglob("*.py"))
             for line, what in fallbacks(ast.parse(path.read_text(encoding="utf-8")), keys)]
    assert not found, "defaults outside the schema:\n" + "\n".join(found)


def test_the_check_finds_each_kind_of_fallback():
    keys = {"mlm_head", "eval_batch_size", "init"}
    planted = '''
x = section.get("mlm_head", "bert")
y = getattr(args, "param_init", None) or "bert_xavier_attention"
z = getattr(args, "mlm_head", "bert")
ok = section.get("mlm_head")  # reads the filled-in config
ok2 = row.get("init", {})  # an absent section, not a value

class Settings:
    eval_batch_size: int = 128

    @classmethod
    def from_params(cls, params): ...

class Record:  # not a config section
    init: str = "xlm"

class Shape(Settings):  # a section's type by its base
    mlm_head: str = option("bert")
'''
    assert [what for _, what in fallbacks(ast.parse(planted), keys)] == [
        '.get("mlm_head", ...)', 'getattr(..., "param_init") or ...', 'getattr(..., "mlm_head", ...)',
        "Settings.eval_batch_size = ...", "Shape.mlm_head = ..."]


def test_a_sections_type_takes_the_schemas_defaults():
    from xling.finetune.grid import GridSettings

    defaults = section_defaults("finetune", "grid_jobs")
    assert defaults == {"compile": None, "compile_mode": "default", "bf16": None, "buckets": None,
                        "eval_batch_size": 128}
    assert GridSettings.from_params() == GridSettings(**defaults)
    assert GridSettings.from_params({"eval_batch_size": 8}).eval_batch_size == 8
    assert Path(SRC / "config.schema.yaml").is_file()
