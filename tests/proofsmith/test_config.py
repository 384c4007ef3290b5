import dataclasses
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from data.errors import InputError
from proofsmith.cli import build_parser
from proofsmith.config import Config, field_docs, parse_assignment, resolve_config, to_toml
from proofsmith.options import (
    ENGINE_FLAGS, EVAL_PROVER_FLAGS, EVAL_SELECTION_FLAGS, EVAL_VERIFIER_FLAGS, META_VERIFY_FLAGS, PROVE_FLAGS, VERIFY_FLAGS,
    WORLD_MODEL_FLAGS,
    Flag, overrides_from,
)
from training.config import TrainConfig
from training.world_model.config import WorldModelConfig

REPO = Path(__file__).resolve().parents[2]
HEAVY_MODULES = ("torch", "transformers", "vllm", "trl", "httpx")
LIGHT_MODULES = (
    "proofsmith.config",
    "proofsmith.options",
    "engine.config",
    "generator.config",
    "verifier.config",
    "meta_verifier.config",
    "training.auto_labeling.config",
    "eval.config",
    "training.config",
    "training.world_model.config",
    "data.readers",
    "data.world.config",
    "proofsmith.cli",
)


def config_classes(cls: type = Config) -> list[type]:
    found = [cls]
    for item in dataclasses.fields(cls):
        if isinstance(item.type, type) and dataclasses.is_dataclass(item.type):
            found += config_classes(item.type)
        elif item.default_factory is not dataclasses.MISSING and dataclasses.is_dataclass(item.default_factory):
            found += config_classes(item.default_factory)
    return found


def write_toml(folder: Path, text: str) -> Path:
    path = folder / "run.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_config_modules_import_no_heavy_libraries() -> None:
    script = (
        "import sys\n"
        f"for name in {LIGHT_MODULES!r}:\n"
        "    __import__(name)\n"
        f"print(sorted(name for name in {HEAVY_MODULES!r} if name in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_config_classes_cover_every_section() -> None:
    names = {cls.__name__ for cls in config_classes()}
    assert names == {
        "Config", "EngineConfig", "SamplingConfig", "RefineConfig", "VerifyConfig", "MetaVerifyConfig", "LabelConfig",
        "SearchConfig", "VerifierEvalConfig", "MetaVerifierEvalConfig", "SelectionEvalConfig", "ProverEvalConfig",
        "GraderConfig", "WorldConfig", "CalibrationConfig",
    }


@pytest.mark.parametrize("cls", list(dict.fromkeys(config_classes() + config_classes(TrainConfig)
                                                    + config_classes(WorldModelConfig))), ids=lambda cls: f"{cls.__module__}.{cls.__name__}")
def test_every_config_field_has_a_docstring(cls: type) -> None:
    docs = field_docs(cls)
    undocumented = [item.name for item in dataclasses.fields(cls) if not docs.get(item.name, "").strip()]
    assert undocumented == []


@pytest.mark.parametrize(
    "flag",
    ENGINE_FLAGS + PROVE_FLAGS + VERIFY_FLAGS + META_VERIFY_FLAGS + EVAL_VERIFIER_FLAGS + EVAL_SELECTION_FLAGS
    + EVAL_PROVER_FLAGS,
    ids=lambda flag: f"{flag.name}->{flag.path}",
)
def test_every_flag_names_a_config_field(flag: Flag) -> None:
    section: Any = Config()
    for part in flag.path.split("."):
        assert hasattr(section, part), flag.path
        section = getattr(section, part)


@pytest.mark.parametrize("flag", WORLD_MODEL_FLAGS, ids=lambda flag: f"{flag.name}->{flag.path}")
def test_every_world_model_flag_names_a_field(flag: Flag) -> None:
    section: Any = WorldModelConfig()
    for part in flag.path.split("."):
        assert hasattr(section, part), flag.path
        section = getattr(section, part)


def test_defaults() -> None:
    assert resolve_config() == Config()


def test_precedence_defaults_toml_overrides_assignments(tmp_path: Path) -> None:
    path = write_toml(
        tmp_path,
        '[prove]\nmax_rounds = 2\nsamples = 3\nverify_samples = 5\n[engine]\nmodel = "from-file"\nbase_urls = ["http://file"]\n',
    )
    overrides = {"prove": {"samples": "4", "verify_samples": "6"}, "engine": {"base_urls": ["http://flag"]}}
    config = resolve_config(path, overrides, ["prove.verify_samples=7"])
    assert config.prove.max_rounds == 2
    assert config.prove.samples == 4
    assert config.prove.verify_samples == 7
    assert config.engine.model == "from-file"
    assert config.engine.base_urls == ["http://flag"]
    assert config.prove.max_evaluations == Config().prove.max_evaluations
    assert config.sampling == Config().sampling


@pytest.mark.parametrize(
    "assignments, field, expected",
    [
        (["sampling.seed=7"], ("sampling", "seed"), 7),
        (["sampling.seed=none"], ("sampling", "seed"), None),
        (["engine.base_urls=http://a,http://b"], ("engine", "base_urls"), ["http://a", "http://b"]),
        (["engine.base_urls="], ("engine", "base_urls"), []),
        (["sampling.temperature=0"], ("sampling", "temperature"), 0.0),
        (["prompts_dir=/tmp/prompts"], ("prompts_dir",), "/tmp/prompts"),
        (["engine.model=a=b"], ("engine", "model"), "a=b"),
        (["prove.max_rounds=2", "prove.max_rounds=5"], ("prove", "max_rounds"), 5),
        (["prove.feedback=verifier"], ("prove", "feedback"), "verifier"),
    ],
    ids=["int", "none", "list", "empty-list", "float", "top-level", "value-with-equals", "last-wins", "choice"],
)
def test_set_assignments(assignments: list[str], field: tuple[str, ...], expected: Any) -> None:
    value: Any = resolve_config(None, None, assignments)
    for part in field:
        value = getattr(value, part)
    assert value == expected


def test_parse_assignment_nests() -> None:
    assert parse_assignment("engine.model = x") == {"engine": {"model": " x"}}


@pytest.mark.parametrize(
    "overrides, assignments, fragments",
    [
        ({"prove": {"max_rounds": "abc"}}, [], ["prove.max_rounds", "abc"]),
        ({"prove": {"max_rounds": 2.5}}, [], ["prove.max_rounds", "2.5"]),
        ({"prove": {"max_rounds": True}}, [], ["prove.max_rounds"]),
        ({"sampling": {"temperature": "hot"}}, [], ["sampling.temperature", "hot"]),
        ({"engine": {"model": ["a"]}}, [], ["engine.model"]),
        ({"engine": {"base_urls": 5}}, [], ["engine.base_urls"]),
        ({"engine": 3}, [], ["engine"]),
        ({"prove": {"max_round": 3}}, [], ["max_round"]),
        ({"colour": "red"}, [], ["colour"]),
        ({"engine": {"backend": "nope"}}, [], ["engine", "nope"]),
        ({"prove": {"feedback": "oracle"}}, [], ["prove", "oracle"]),
        ({"prove": {"max_rounds": 0}}, [], ["prove", "max_rounds"]),
        ({}, ["prove.max_rounds=abc"], ["prove.max_rounds", "abc"]),
        ({}, ["prove.max_rounds"], ["--set", "prove.max_rounds"]),
        ({}, ["sampling.top_p=0"], ["sampling", "top_p"]),
        ({}, ["engine.backend=tensorrt"], ["engine", "tensorrt"]),
    ],
    ids=["str-for-int", "float-for-int", "bool-for-int", "str-for-float", "list-for-str", "int-for-list",
         "scalar-for-table", "unknown-key", "unknown-section", "unknown-engine", "unknown-feedback", "out-of-range",
         "set-str-for-int", "set-without-equals", "set-out-of-range", "set-unknown-engine"],
)
def test_invalid_settings_raise_input_error_naming_them(
    overrides: dict[str, Any], assignments: list[str], fragments: list[str]
) -> None:
    with pytest.raises(InputError) as caught:
        resolve_config(None, overrides, assignments)
    for fragment in fragments:
        assert fragment in str(caught.value)


@pytest.mark.parametrize(
    "text, fragments",
    [
        ("[prove]\nmax_rounds = ", ["not valid TOML"]),
        ("[prove]\nmax_rounds = 'x'\n", ["prove.max_rounds"]),
        ("[engine]\nbackend = 'nope'\n", ["engine", "nope"]),
        ("[verify]\nsample = 2\n", ["sample"]),
    ],
    ids=["invalid-toml", "wrong-type", "unknown-engine", "unknown-key"],
)
def test_invalid_toml_file_raises_input_error(tmp_path: Path, text: str, fragments: list[str]) -> None:
    path = write_toml(tmp_path, text)
    with pytest.raises(InputError) as caught:
        resolve_config(path)
    for fragment in fragments:
        assert fragment in str(caught.value)


def test_missing_toml_file_raises_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="missing.toml"):
        resolve_config(tmp_path / "missing.toml")


def customised_config() -> Config:
    return resolve_config(
        None,
        {
            "engine": {"backend": "openai", "model": 'quote" back\\slash é', "base_urls": ["http://a/v1", "http://b/v1"]},
            "sampling": {"seed": 3, "temperature": 0.0, "top_p": 1.0},
            "prove": {"feedback": "verifier", "max_rounds": 2},
            "verify": {"samples": 9},
            "meta_verify": {"samples": 2},
            "prompts_dir": "/tmp/my prompts",
        },
    )


@pytest.mark.parametrize("config", [Config(), customised_config()], ids=["defaults", "customised"])
def test_to_toml_round_trips(config: Config, tmp_path: Path) -> None:
    text = to_toml(config)
    assert resolve_config(None, tomllib.loads(text)) == config
    assert resolve_config(write_toml(tmp_path, text)) == config


def test_to_toml_comments_carry_field_docs() -> None:
    text = to_toml(Config())
    assert f"# {field_docs(type(Config().engine))['backend']}\nbackend = " in text
    assert "# seed = (unset)" in text


def test_to_toml_round_trips_non_bmp_text() -> None:
    config = resolve_config(None, {"prompts_dir": "/data/prompts-\U0001F600"})
    assert resolve_config(None, tomllib.loads(to_toml(config))) == config


def test_cli_prove_flags_land_in_config() -> None:
    args = build_parser().parse_args(["prove", "text", "--max-rounds", "3", "--base-url", "A", "--base-url", "B"])
    assert args.command == "prove"
    assert args.problem == "text"
    config = resolve_config(args.config, overrides_from(args, ENGINE_FLAGS + PROVE_FLAGS), args.set)
    assert config.prove.max_rounds == 3
    assert config.engine.base_urls == ["A", "B"]
    assert config.prove.samples == Config().prove.samples


def test_cli_precedence_through_parser(tmp_path: Path) -> None:
    path = write_toml(tmp_path, "[prove]\nmax_rounds = 2\nsamples = 2\n[sampling]\nmax_tokens = 100\n")
    args = build_parser().parse_args(
        ["prove", "p", "--config", str(path), "--max-rounds", "4", "--samples", "5", "--set", "prove.samples=6"]
    )
    config = resolve_config(args.config, overrides_from(args, ENGINE_FLAGS + PROVE_FLAGS), args.set)
    assert (config.prove.max_rounds, config.prove.samples, config.sampling.max_tokens) == (4, 6, 100)


@pytest.mark.parametrize(
    "argv, flags, field, expected",
    [
        (["verify", "--problem", "p.txt", "--proof", "q.txt", "--samples", "8"], VERIFY_FLAGS, ("verify", "samples"), 8),
        (
            ["meta-verify", "--problem", "p", "--proof", "q", "--analysis", "a", "--samples", "3"],
            META_VERIFY_FLAGS, ("meta_verify", "samples"), 3,
        ),
        (["verify", "--problem", "p", "--proof", "q", "--engine", "openai"], VERIFY_FLAGS, ("engine", "backend"), "openai"),
        (["prove", "x", "--seed", "11"], PROVE_FLAGS, ("sampling", "seed"), 11),
        (["prove", "x", "--prompts", "/p"], PROVE_FLAGS, ("prompts_dir",), "/p"),
        (["eval", "verifier", "d.csv", "--out", "o", "--meta", "2"], EVAL_VERIFIER_FLAGS, ("eval_verifier", "meta"), 2),
        (["eval", "verifier", "d.csv", "--out", "o", "--max-items", "5"], EVAL_VERIFIER_FLAGS,
         ("eval_verifier", "max_items"), 5),
        (["eval", "prover", "d.csv", "--out", "o", "--grader-model", "g"], EVAL_PROVER_FLAGS, ("grader", "model"), "g"),
        (["eval", "prover", "d.csv", "--out", "o", "--select", "PB-Basic"], EVAL_PROVER_FLAGS,
         ("eval_prover", "select"), ["PB-Basic"]),
    ],
    ids=["verify-samples", "meta-verify-samples", "engine", "seed", "prompts", "eval-meta", "eval-max-items",
         "prover-grader-model", "prover-select"],
)
def test_cli_subcommand_flags(argv: list[str], flags: tuple[Flag, ...], field: tuple[str, ...], expected: Any) -> None:
    args = build_parser().parse_args(argv)
    value: Any = resolve_config(args.config, overrides_from(args, ENGINE_FLAGS + flags), args.set)
    for part in field:
        value = getattr(value, part)
    assert value == expected


def test_cli_flags_left_out_override_nothing() -> None:
    args = build_parser().parse_args(["prove", "x"])
    assert overrides_from(args, ENGINE_FLAGS + PROVE_FLAGS) == {}


SHIPPED_CONFIGS = sorted((REPO / "configs").glob("*.toml"))


@pytest.mark.parametrize(
    "path",
    SHIPPED_CONFIGS or [pytest.param(None, marks=pytest.mark.skip(reason="no shipped configs/*.toml yet"))],
    ids=lambda path: path.name if isinstance(path, Path) else "none",
)
def test_shipped_configs_resolve(path: Path) -> None:
    """World-model configs (named world_model*) resolve into WorldModelConfig, training configs (they name a run_dir)
    into TrainConfig, the others into Config."""
    values = tomllib.loads(path.read_text(encoding="utf-8"))
    root = WorldModelConfig if path.name.startswith("world_model") else TrainConfig if "run_dir" in values else Config
    config = resolve_config(path, root=root)
    assert resolve_config(None, tomllib.loads(to_toml(config)), root=root) == config


def test_every_command_formats_its_help() -> None:
    """Help text comes from field docstrings: a bare "%" in one made ``world model --help`` crash in argparse."""
    import argparse

    def parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
        nested = [choice for action in parser._actions if isinstance(action, argparse._SubParsersAction)
                  for choice in action.choices.values()]
        return [parser, *(found for child in nested for found in parsers(child))]

    every = parsers(build_parser())
    assert len(every) >= 14  # proofsmith and each command and subcommand
    for parser in every:
        assert parser.format_help().startswith("usage: ")
