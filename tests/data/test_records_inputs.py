import hashlib
import json
import math
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from data.errors import InputError
from data.inputs import read_text
from data.records import ALLOWED_SCORES, ProofItem, check_score, stable_id
from proofsmith.run_files import JsonlRecorder, check_output_path


@pytest.mark.parametrize("value", [0, 0.0, 0.5, 1, 1.0, None], ids=repr)
def test_check_score_accepts(value: float | None) -> None:
    check_score(value)


@pytest.mark.parametrize("value", [0.7, 2, -1, 0.25, math.nan, True, False, "1", "0.5"], ids=repr)
def test_check_score_rejects(value: object) -> None:
    with pytest.raises(ValueError, match="my_score"):
        check_score(value, "my_score")  # type: ignore[arg-type]


def test_check_score_none_when_required() -> None:
    with pytest.raises(ValueError, match="rating is required"):
        check_score(None, "rating", allow_none=False)


def test_allowed_scores() -> None:
    assert ALLOWED_SCORES == (0.0, 0.5, 1.0)


def test_stable_id_is_a_short_content_hash() -> None:
    assert stable_id("1 + 1 = 2") == hashlib.sha256(b"1 + 1 = 2").hexdigest()[:16]
    assert stable_id("Prove that sqrt(2) is irrational.") != stable_id("Prove that sqrt(3) is irrational.")


@pytest.mark.parametrize(
    "problem, proof, score",
    [("", "p", None), ("q", "   ", None), ("q", "p", 0.7)],
    ids=["empty-problem", "blank-proof", "score-0.7"],
)
def test_proof_item_rejects_bad_fields(problem: str, proof: str, score: float | None) -> None:
    with pytest.raises(ValueError):
        ProofItem("id-1", problem, proof, score)


def test_stable_id_separates_parts() -> None:
    assert stable_id("ab", "c") != stable_id("a", "bc")


def test_read_text_returns_stripped_utf8(tmp_path: Path) -> None:
    path = tmp_path / "problem.txt"
    path.write_text("\n  Prove ∀x∈ℝ, x² ≥ 0.  \n", encoding="utf-8")
    assert read_text(path, "problem") == "Prove ∀x∈ℝ, x² ≥ 0."


def make_missing(folder: Path) -> Path:
    return folder / "absent.txt"


def make_directory(folder: Path) -> Path:
    path = folder / "a-directory"
    path.mkdir()
    return path


def make_latin1(folder: Path) -> Path:
    path = folder / "latin1.txt"
    path.write_bytes("Prouvez que x ≥ 0 é".encode("latin-1", errors="replace"))
    return path


def make_binary(folder: Path) -> Path:
    path = folder / "binary.bin"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    return path


def make_empty(folder: Path) -> Path:
    path = folder / "empty.txt"
    path.write_bytes(b"")
    return path


def make_whitespace(folder: Path) -> Path:
    path = folder / "blank.txt"
    path.write_text(" \n\t\n  ", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "make, fragment",
    [
        (make_missing, "not found"),
        (make_directory, "directory"),
        (make_latin1, "not UTF-8"),
        (make_binary, "not UTF-8"),
        (make_empty, "empty"),
        (make_whitespace, "empty"),
    ],
    ids=["missing", "directory", "latin-1", "binary", "empty", "whitespace-only"],
)
def test_read_text_errors_name_the_file(tmp_path: Path, make: Callable[[Path], Path], fragment: str) -> None:
    path = make(tmp_path)
    with pytest.raises(InputError) as caught:
        read_text(path, "proof")
    message = str(caught.value)
    assert str(path) in message
    assert fragment in message
    assert "proof" in message


def read_lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_recorder_writes_partial_and_flushes_each_record(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    partial = tmp_path / "run.jsonl.partial"
    recorder = JsonlRecorder(path)
    assert recorder.partial_path == partial
    assert partial.exists() and not path.exists()
    recorder.write({"round": 1, "text": "∑ é"})
    assert read_lines(partial) == [{"round": 1, "text": "∑ é"}]
    recorder.write({"round": 2, "score": None})
    assert read_lines(partial) == [{"round": 1, "text": "∑ é"}, {"round": 2, "score": None}]
    assert not path.exists()
    assert recorder.commit() == path
    assert read_lines(path) == [{"round": 1, "text": "∑ é"}, {"round": 2, "score": None}]
    assert not partial.exists()


def test_recorder_close_without_commit_leaves_only_partial(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with JsonlRecorder(path) as recorder:
        recorder.write({"round": 1})
    assert not path.exists()
    assert read_lines(tmp_path / "run.jsonl.partial") == [{"round": 1}]


def test_recorder_failure_inside_context_leaves_no_final_file(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with pytest.raises(RuntimeError):
        with JsonlRecorder(path) as recorder:
            recorder.write({"round": 1})
            raise RuntimeError("engine died")
    assert not path.exists()
    assert (tmp_path / "run.jsonl.partial").exists()


def test_recorder_commit_inside_context(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with JsonlRecorder(path) as recorder:
        recorder.write({"round": 1})
        recorder.commit()
    assert read_lines(path) == [{"round": 1}]


def test_recorder_commit_replaces_an_old_file(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text('{"old": true}\n', encoding="utf-8")
    recorder = JsonlRecorder(path)
    assert read_lines(path) == [{"old": True}]
    recorder.write({"new": True})
    recorder.commit()
    assert read_lines(path) == [{"new": True}]


def test_recorder_commit_with_no_records_creates_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    JsonlRecorder(path).commit()
    assert path.read_text(encoding="utf-8") == ""


def test_check_output_path_accepts_writable_target(tmp_path: Path) -> None:
    assert check_output_path(tmp_path / "out.jsonl") == tmp_path / "out.jsonl"


@pytest.mark.parametrize(
    "relative, fragment",
    [(".", "is a directory"), ("missing-dir/out.jsonl", "does not exist")],
    ids=["directory", "missing-parent"],
)
def test_check_output_path_errors(tmp_path: Path, relative: str, fragment: str) -> None:
    target = tmp_path / relative
    with pytest.raises(InputError, match=fragment):
        check_output_path(target)


def test_recorder_fails_before_creating_anything(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        JsonlRecorder(tmp_path / "missing-dir" / "out.jsonl")
    assert list(tmp_path.iterdir()) == []


def test_check_output_path_unwritable_parent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Root (as CI runs) writes through a mode of 0o500, so the access check is made to refuse at its seam instead.
    folder = tmp_path / "read-only"
    folder.mkdir()
    real_access = os.access

    def access(path: str | Path, mode: int, **kwargs: object) -> bool:
        return not (Path(path) == folder and mode & os.W_OK) and real_access(path, mode, **kwargs)

    monkeypatch.setattr(os, "access", access)
    with pytest.raises(InputError) as raised:
        check_output_path(folder / "out.jsonl")
    assert str(raised.value) == f"output directory is not writable: {folder}"
    assert list(folder.iterdir()) == []
