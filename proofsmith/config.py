"""The resolved run configuration: dataclass defaults < TOML file < flags < ``--set``.

Every section is a dataclass whose fields carry a one-line docstring; that text is the
``--help`` of the matching flag and the comment in ``--dry-run`` output. This module and
the section modules import no torch, so configs resolve (and fail) instantly.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import json
import keyword
import textwrap
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from data.errors import InputError
from data.world.config import WorldConfig
from engine.config import EngineConfig, SamplingConfig
from eval.config import CalibrationConfig, GraderConfig, MetaVerifierEvalConfig, ProverEvalConfig, SelectionEvalConfig, VerifierEvalConfig
from generator.config import RefineConfig, SearchConfig
from meta_verifier.config import MetaVerifyConfig
from training.auto_labeling.config import LabelConfig
from verifier.config import VerifyConfig


@dataclass
class Config:
    engine: EngineConfig = field(default_factory=EngineConfig)
    """Which backend runs the model, and where the model comes from."""
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    """Sampling settings for every role."""
    prove: RefineConfig = field(default_factory=RefineConfig)
    """Sequential refinement (`proofsmith prove`)."""
    search: SearchConfig = field(default_factory=SearchConfig)
    """High-compute pool search (`proofsmith prove --search`)."""
    verify: VerifyConfig = field(default_factory=VerifyConfig)
    """Verification (`proofsmith verify`)."""
    meta_verify: MetaVerifyConfig = field(default_factory=MetaVerifyConfig)
    """Meta-verification (`proofsmith meta-verify`)."""
    label: LabelConfig = field(default_factory=LabelConfig)
    """Auto-labeling by scaled verification (`proofsmith label`)."""
    eval_verifier: VerifierEvalConfig = field(default_factory=VerifierEvalConfig)
    """Verifier agreement with human grades (`proofsmith eval verifier`)."""
    eval_meta_verifier: MetaVerifierEvalConfig = field(default_factory=MetaVerifierEvalConfig)
    """The meta-verifier against reference ratings of critiques (`proofsmith eval meta-verifier`)."""
    eval_selection: SelectionEvalConfig = field(default_factory=SelectionEvalConfig)
    """Picking the better of two proofs by mean verifier score (`proofsmith eval selection`)."""
    eval_prover: ProverEvalConfig = field(default_factory=ProverEvalConfig)
    """Prover benchmark: prove, mark against a reference, check short answers (`proofsmith eval prover`)."""
    grader: GraderConfig = field(default_factory=GraderConfig)
    """The engine that marks proofs in `proofsmith eval prover` (defaults to the prover's own)."""
    world: WorldConfig = field(default_factory=WorldConfig)
    """The ground-truth world's data (`proofsmith world`)."""
    calibrate: CalibrationConfig = field(default_factory=CalibrationConfig)
    """A model's pass rates and verifier recalls per world family and level, against the checker (`proofsmith world calibrate`)."""
    prompts_dir: str = ""
    """Directory whose NAME.md files replace the built-in prompt templates (verify, meta_verify, generate, refine)."""


@functools.cache
def field_docs(cls: type) -> dict[str, str]:
    """The docstring written under each field of dataclass ``cls``."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs: dict[str, str] = {}
    for statement, following in zip(body, body[1:]):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[statement.target.id] = " ".join(following.value.value.split())
    return docs


def _field_types(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _coerce(value: Any, annotation: Any, where: str) -> Any:
    """Check/convert a TOML or command-line value to the field's declared type."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        options = [option for option in typing.get_args(annotation) if option is not type(None)]
        if value is None or (isinstance(value, str) and value.lower() in ("none", "null")):
            return None
        return _coerce(value, options[0], where)
    if origin is list:
        (item_type,) = typing.get_args(annotation)
        if isinstance(value, str):
            value = [part for part in value.split(",") if part]
        if not isinstance(value, list):
            raise InputError(f"{where} must be a list")
        return [_coerce(item, item_type, where) for item in value]
    if annotation is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
            return value.lower() in ("true", "1", "yes")
        raise InputError(f"{where} must be true or false, got {value!r}")
    if annotation in (int, float):
        if isinstance(value, bool):
            raise InputError(f"{where} must be a number, got {value!r}")
        try:
            number = annotation(value)
        except (TypeError, ValueError):
            raise InputError(f"{where} must be {'an integer' if annotation is int else 'a number'}, got {value!r}") from None
        if annotation is int and isinstance(value, float) and not value.is_integer():
            raise InputError(f"{where} must be an integer, got {value!r}")
        return number
    if annotation is str:
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise InputError(f"{where} must be a string, got {value!r}")
        return str(value)
    return value


def field_name(key: str) -> str:
    """A TOML key that is a Python keyword (``async``) names the field with a trailing underscore (``async_``)."""
    return f"{key}_" if keyword.iskeyword(key) else key


def toml_key(name: str) -> str:
    return name[:-1] if name.endswith("_") and keyword.iskeyword(name[:-1]) else name


MOVED: dict[str, str] = {
    "grpo.max_completion_length": "rollouts.max_tokens",
    "grpo.temperature": "rollouts.temperature",
    "rewards.max_tokens": "scoring.max_tokens",
    "rewards.temperature": "scoring.temperature",
    "loop.max_tokens": "rollouts.max_tokens (the proofs the loop samples) and scoring.max_tokens (its verifications)",
}
"""Settings that moved, so an old config fails with a pointer to the new name instead of a bare "unknown"."""


def _section_default(cls: type, name: str) -> Any:
    """The default value of field ``name`` of dataclass ``cls`` (a section's own defaults, from its factory)."""
    for item in dataclasses.fields(cls):
        if item.name == name:
            if item.default_factory is not dataclasses.MISSING:
                return item.default_factory()
            return None if item.default is dataclasses.MISSING else item.default
    return None


def _build(cls: type, values: dict[str, Any], where: str, defaults: Any = None) -> Any:
    """Instantiate dataclass ``cls`` from a (possibly nested) dict, rejecting unknown keys.

    Fields not given keep ``defaults``' values when given: a section whose parent declares
    its own defaults (``field(default_factory=lambda: Settings(temperature=0.7))``) keeps
    them when a config sets only some of its fields.
    """
    types_by_name = {toml_key(name): annotation for name, annotation in _field_types(cls).items()}
    unknown = sorted(set(values) - set(types_by_name))
    if unknown:
        moved = MOVED.get(f"{where}{unknown[0]}")
        if moved:
            raise InputError(f"setting {where}{unknown[0]} is now {moved}")
        raise InputError(f"unknown setting {where}{unknown[0]!r}; known: {', '.join(sorted(types_by_name))}")
    arguments: dict[str, Any] = {}
    if defaults is not None:
        arguments = {item.name: getattr(defaults, item.name) for item in dataclasses.fields(cls) if item.init}
    for name, value in values.items():
        annotation = types_by_name[name]
        if dataclasses.is_dataclass(annotation):
            if not isinstance(value, dict):
                raise InputError(f"{where}{name} must be a table")
            arguments[field_name(name)] = _build(annotation, value, f"{where}{name}.", _section_default(cls, field_name(name)))
        else:
            arguments[field_name(name)] = _coerce(value, annotation, f"{where}{name}")
    try:
        return cls(**arguments)
    except ValueError as error:
        raise InputError(f"{where.rstrip('.') or 'config'}: {error}") from None


def _merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in update.items():
        merged[key] = _merge(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) else value
    return merged


def parse_assignment(assignment: str) -> dict[str, Any]:
    """``section.key=value`` (from ``--set``) as a nested dict of strings."""
    if "=" not in assignment:
        raise InputError(f"--set expects section.key=value, got {assignment!r}")
    dotted, value = assignment.split("=", 1)
    nested: dict[str, Any] = {}
    cursor = nested
    parts = dotted.strip().split(".")
    for part in parts[:-1]:
        cursor = cursor.setdefault(part, {})
    cursor[parts[-1]] = value
    return nested


def read_toml(path: str | Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise InputError(f"config file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read config file {path}: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"config file {path} is not valid TOML: {error}") from None


def resolve_config(
    path: str | Path | None = None, overrides: dict[str, Any] | None = None, assignments: list[str] | None = None,
    root: type = Config,
) -> Any:
    """Defaults, then the TOML file, then flag overrides, then ``--set`` assignments, into dataclass ``root``."""
    values: dict[str, Any] = read_toml(path) if path else {}
    values = _merge(values, overrides or {})
    for assignment in assignments or []:
        values = _merge(values, parse_assignment(assignment))
    return _build(root, values, "")


def config_dict(config: Any) -> dict[str, Any]:
    return dataclasses.asdict(config)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)  # JSON string escapes are valid TOML basic-string escapes


def to_toml(config: Any) -> str:
    """The config as TOML with each field's docstring as a comment; ``None`` fields are commented out."""
    scalars: list[str] = []
    tables: list[str] = []
    docs = field_docs(type(config))
    for item in dataclasses.fields(config):
        value = getattr(config, item.name)
        if dataclasses.is_dataclass(value):
            lines = [f"[{toml_key(item.name)}]"]
            section_docs = field_docs(type(value))
            for sub in dataclasses.fields(value):
                sub_value = getattr(value, sub.name)
                lines.append(f"# {section_docs.get(sub.name, '')}")
                key = toml_key(sub.name)
                lines.append(f"{key} = {_toml_value(sub_value)}" if sub_value is not None else f"# {key} = (unset)")
            tables.append("\n".join(lines))
        else:
            scalars.append(f"# {docs.get(item.name, '')}\n{toml_key(item.name)} = {_toml_value(value)}")
    return "\n\n".join(scalars + tables) + "\n"
