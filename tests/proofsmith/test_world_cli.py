"""``proofsmith world``: the world's data as JSONL that label and eval verifier read as they are."""

from __future__ import annotations

import json
from pathlib import Path

from data.world.blame import blamed_step
from data.world.checker import check
from data.world.claims import parse_claim
from eval.human_grades import read_human_grades
from training.config import DataSettings
from training.role_data.rows import read_rows


def test_world_writes_checked_proofs_reproducibly(cli, tmp_path: Path) -> None:
    out = tmp_path / "world.jsonl"
    result = cli("world", "--out", str(out), "--problems-per-template", "1", "--family", "inequality",
                 "--family", "equation", "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert summary["proofs"] == len(rows) and set(summary["families"]) == {"inequality", "equation"}
    assert {row["family"] for row in rows} == {"inequality", "equation"}
    for row in rows:  # the recorded truth is the checker's verdict on the recorded text
        verdict = check([parse_claim(claim) for claim in row["goal"]], row["proof"])
        assert (row["score"], row["first_bad_step"]) == (verdict.score, verdict.first_bad_step)
    again = tmp_path / "again.jsonl"
    assert cli("world", "--out", str(again), "--problems-per-template", "1", "--family", "inequality",
               "--family", "equation").returncode == 0
    assert again.read_bytes() == out.read_bytes()
    grades = read_human_grades(out)  # eval verifier's reader takes the file as it is
    assert [grade.human_score for grade in grades] == [row["score"] for row in rows]
    assert all(blamed_step(row["critique"]) == row["first_bad_step"] for row in rows)


def test_meta_out_writes_rated_critiques_that_train_meta_verifier_reads(cli, tmp_path: Path) -> None:
    out, meta = tmp_path / "world.jsonl", tmp_path / "meta.jsonl"
    result = cli("world", "--out", str(out), "--meta-out", str(meta), "--problems-per-template", "1",
                 "--family", "divisibility", "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    rows = [json.loads(line) for line in meta.read_text(encoding="utf-8").splitlines()]
    assert summary["meta_rows"] == len(rows) and set(summary["meta_ratings"]) == {"0", "0.5", "1"}
    settings = DataSettings(path=str(meta))
    assert len(read_rows(settings, "meta-verifier")) == len(rows)
    taught = read_rows(settings, "sft", ("meta-verifier",))
    assert all(row.assessment for row in taught)


def test_unknown_family_is_a_one_line_error(cli, tmp_path: Path) -> None:
    result = cli("world", "--out", str(tmp_path / "world.jsonl"), "--family", "geometry")
    assert result.returncode == 2 and result.stderr.strip().splitlines() == [
        "proofsmith: error: world: unknown family 'geometry'; known: identity, inequality, divisibility, equation, induction"
    ]
    assert not (tmp_path / "world.jsonl").exists()
