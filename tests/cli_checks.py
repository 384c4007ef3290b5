"""What every CLI test checks of a refused command, shared by the test modules (pytest's pythonpath holds tests/)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

NO_MODEL = ("--engine", "transformers", "--model", "./nowhere")
"""Any command that got as far as loading a model would fail with "model path does not exist"."""

PROJECT_LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d [\d:,]+ (WARNING|ERROR) (engine|data|generator|verifier|meta_verifier|training|eval|proofsmith)[.:]")


def assert_clean_error(result: Any, fragment: str) -> None:
    """Exit 2, the error as the last line of stderr, before it only our own progress and warnings, nothing on stdout."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("proofsmith: error: ") and fragment in lines[-1], result.stderr
    foreign = [line for line in lines[:-1] if not line.startswith("proofsmith: ") and not PROJECT_LOG_LINE.match(line)]
    assert not foreign, result.stderr
    assert result.stdout == ""


def assert_other_settings_refused_untouched(cli: Callable[..., Any], first: Sequence[str], record: dict[str, Any],
                                            second: Sequence[str], changes: Sequence[str]) -> None:
    """``first`` (a command with ``--out DIR``) dry-runs, DIR gets one record, then ``second`` (the same run with other
    settings) is refused with each of ``changes`` in its message, and DIR is left byte for byte as it was."""
    out = Path(first[list(first).index("--out") + 1])
    assert cli(*first, "--dry-run", *NO_MODEL).returncode == 0
    (out / "items.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    result = cli(*second, *NO_MODEL)
    assert_clean_error(result, "holds a run with different settings")
    assert all(change in result.stderr for change in changes), result.stderr
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before
