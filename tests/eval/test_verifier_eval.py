"""Records -> verifier metrics, raw and meta-filtered, on hand-made records (no model)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from data.errors import InputError
from eval.metrics import VerifiedItem, agreement_by_sample_count
from eval.verifier_eval import (
    METRICS_NAME,
    evaluate,
    GradeFacts,
    filtered_item,
    grade_facts,
    headline,
    judged_invalid,
    metrics_document,
    read_records,
    unjudged,
    write_outputs,
)


def analysis(score: float | None, valid: bool | None = None, meta: tuple[float | None, ...] = ()) -> dict[str, Any]:
    return {"score": score, "analysis": "...", "valid": valid, "meta": [{"score": rating} for rating in meta]}


def record(item_id: str, human: float | None, *analyses: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": item_id, "problem": "P", "proof": "Q", "human_score": human, "analyses": list(analyses), **extra}


# a: right at every n. b: a confirmed critique (kept). c: a critique judged invalid, then a 1:
# raw says 0 (wrong), filtered says nothing at n=1 and 1 (right) at n=2. d: a format failure,
# then a flagged analysis whose one meta rating did not parse (unjudged, kept). e: prompt too
# long. f: no human score.
RECORDS = [
    record("a", 1.0, analysis(1.0), analysis(1.0)),
    record("b", 0.0, analysis(0.0, True, (1.0,)), analysis(1.0)),
    record("c", 1.0, analysis(0.0, False, (0.0,)), analysis(1.0)),
    record("d", 0.5, analysis(None), analysis(0.5, False, (None,))),
    record("e", 0.0, error="prompt 0 has 9000 tokens; the model's context holds 8192"),
    record("f", None, analysis(1.0), analysis(1.0)),
]
SETTINGS = {"model": "m", "engine": "scripted", "data_path": "grades.jsonl", "grade_mapping": "almost-half", "n": 2, "meta_m": 1}


def test_judged_invalid_needs_a_parsed_rating() -> None:
    assert judged_invalid(analysis(0.0, False, (0.0,)))
    assert not judged_invalid(analysis(0.0, False, (None, None)))  # the meta-verifier never answered
    assert not judged_invalid(analysis(0.0, True, (1.0,)))
    assert not judged_invalid(analysis(1.0))  # a 1 is never meta-verified
    assert unjudged(analysis(0.0, False, (None,))) and unjudged({"score": 0.5, "valid": None, "meta": [], "meta_error": "x"})
    assert not unjudged(analysis(1.0)) and not unjudged(analysis(None)) and not unjudged(analysis(0.0, False, (0.0,)))


def test_the_meta_filter_removes_refuted_critiques_and_keeps_unknown_ones() -> None:
    def critiqued(score: float, status: str | None, ratings: tuple) -> dict:
        return {**analysis(score, status == "confirmed" if status else None, ratings), "critique": status}

    assert judged_invalid(critiqued(0.0, "refuted", (0.0, 0.0)))
    assert not judged_invalid(critiqued(0.0, "unknown", (0.5, 0.5)))  # not confirmed is not refuted
    assert not judged_invalid(critiqued(0.0, "confirmed", (1.0,)))
    assert unjudged(critiqued(0.5, "unknown", (0.5, 0.0))) and not unjudged(critiqued(0.0, "refuted", (0.0,)))
    assert not judged_invalid(critiqued(1.0, None, ())) and not unjudged(critiqued(1.0, None, ()))


def test_error_and_ungraded_records_are_counted_and_left_out() -> None:
    evaluation = evaluate(RECORDS, meta=False)
    assert evaluation.counts == {"records": 6, "evaluated": 4, "prompt_too_long": 1, "without_human_score": 1}
    assert [item.id for item in evaluation.items] == ["a", "b", "c", "d"]
    assert evaluation.meta_filtered is None and evaluation.n == 2


def test_raw_metrics_are_the_sample_count_curve_of_the_analyses() -> None:
    evaluation = evaluate(RECORDS, meta=True)
    items = [VerifiedItem(1, (1, 1), "a"), VerifiedItem(0, (0, 1), "b"), VerifiedItem(1, (0, 1), "c"),
             VerifiedItem(0.5, (None, 0.5), "d")]
    assert evaluation.metrics_by_n == agreement_by_sample_count(items)
    assert evaluation.metrics_by_n[1].accuracy_majority == 0.5  # d has no verdict at n=1: wrong
    assert evaluation.metrics_by_n[2].accuracy_majority == 0.75  # c's tie 0-1 goes low
    assert evaluation.metrics_by_n[2].format_failures == 1


def test_meta_filter_removes_invalid_critiques_at_each_n() -> None:
    filtered = evaluate(RECORDS, meta=True).meta_filtered
    assert filtered is not None and sorted(filtered) == [1, 2]
    one, two = filtered[1], filtered[2]
    assert (one.removed, one.unjudged, two.removed, two.unjudged) == (1, 0, 1, 1)
    assert one.report.items_without_verdict == 2  # c lost its only analysis; d's only one failed the format
    assert one.report.accuracy_majority == 0.5
    assert two.report.accuracy_majority == 1.0  # c keeps its 1; d's unjudged 0.5 stays
    assert two.report.format_failures == 1  # d's unparsable analysis: a removed one is not a failure
    assert two.report.samples == 7 and two.report.samples_per_item is None
    assert filtered_item(RECORDS[2], 1) == (VerifiedItem(1.0, (), "c"), 1, 0)


def test_metrics_document_and_headline() -> None:
    document = metrics_document(evaluate(RECORDS, meta=True), SETTINGS, {"data_items": 6, "selected": 6})
    assert list(document) == ["settings", "counts", "metrics_by_n", "reference_verifier", "cost", "meta_filtered"]
    assert list(document["metrics_by_n"]) == ["1", "2"] and list(document["meta_filtered"]["by_n"]) == ["1", "2"]
    assert document["counts"]["data_items"] == 6 and document["counts"]["prompt_too_long"] == 1
    assert document["meta_filtered"]["by_n"]["2"]["removed_analyses"] == 1
    summary = headline(document)
    assert summary["n"] == 2 and summary["accuracy_majority"] == 0.75
    assert summary["meta_filtered"]["accuracy_majority"] == 1.0 and summary["meta_filtered"]["unjudged_analyses"] == 1
    assert "meta_filtered" not in metrics_document(evaluate(RECORDS, meta=False), SETTINGS, {})


class _Tables(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.ids.append(dict(attrs).get("id") or "")


def test_write_outputs_writes_metrics_and_report(tmp_path: Path) -> None:
    document = write_outputs(tmp_path, evaluate(RECORDS, meta=True), SETTINGS, {"data_items": 6})
    assert json.loads((tmp_path / METRICS_NAME).read_text(encoding="utf-8")) == json.loads(json.dumps(document))
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert _Tables(page).ids == ["settings", "counts", "headline", "confusion", "per-class", "calibration", "metric-vs-n",
                                 "field-vs-n", "cost", "headline-meta-filtered", "metric-vs-n-meta-filtered"]
    assert "Reference verifier" in page and "Not available" in page and 'id="definitions"' in page
    assert "data path" in page and "grades.jsonl" in page
    assert not list(tmp_path.glob("*.partial"))


def test_no_usable_record_gives_an_empty_report(tmp_path: Path) -> None:
    document = write_outputs(tmp_path, evaluate(RECORDS[4:5], meta=True), SETTINGS, {})
    assert document["metrics_by_n"] == {} and document["meta_filtered"]["by_n"] == {}
    assert headline(document)["n"] is None
    assert "No items were evaluated" in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_read_records_keeps_the_order_of_the_ids(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    lines = [json.dumps(record) for record in (RECORDS[1], RECORDS[0], {**RECORDS[1], "analyses": []}, RECORDS[2])]
    path.write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    found = read_records(path, ["a", "b", "z"])
    assert [record["id"] for record in found] == ["a", "b"] and found[1]["analyses"]  # first record per id
    assert read_records(tmp_path / "missing.jsonl", ["a"]) == []
    path.write_text('{"id": "a"}\n{"id": \n', encoding="utf-8")
    with pytest.raises(InputError, match="line 2 is not JSON"):
        read_records(path, ["a"])


def test_grade_facts_read_points_and_the_reference_from_the_data() -> None:
    from eval.human_grades import HumanGrade

    bench = HumanGrade("GB-1", "P", "Q", 0.5, "6", "imo-gradingbench")
    deepseek = HumanGrade("CMO2024-3", "P", "Q", 0.0, "9/21", "deepseek-math-v2",
                          source_fields={"max_points": 21, "average_automatic_rating": 0.9296875})
    corpus = HumanGrade("opc-1", "P", "Q", 1.0, "correct", "open-proof-corpus")
    assert grade_facts(bench) == GradeFacts(6.0, 7.0, None)
    assert grade_facts(deepseek) == GradeFacts(9.0, 21.0, 0.9296875)
    assert grade_facts(corpus) == GradeFacts()


def test_facts_join_the_records_by_id() -> None:
    facts = {"a": GradeFacts(7.0, 7.0, 1.0), "b": GradeFacts(0.0, 7.0, 0.75), "c": GradeFacts(7.0, 7.0, None)}
    evaluation = evaluate(RECORDS, meta=True, facts=facts)
    # at n = 2 the majorities are a 1 -> 7 (human 7), b tie 0 / 1 -> 0 (human 0), c tie -> 0 (human 7); d has no points
    points = evaluation.metrics_by_n[2].points
    assert (points.on_scale, points.off_scale, points.mae_points) == (3, 1, pytest.approx(7 / 3))
    assert evaluation.meta_filtered is not None and evaluation.meta_filtered[2].report.points.on_scale == 3
    reference = evaluation.reference
    assert reference is not None and reference.items == 2  # a and b carry a reference score
    assert reference.reference.accuracy_majority == pytest.approx(1 / 2)  # a: 1 right; b: 0.75 -> 0.5, human 0
    document = metrics_document(evaluation, SETTINGS, {})
    assert document["reference_verifier"]["items"] == 2
    summary = headline(document)
    assert summary["points_mae_points"] == pytest.approx(7 / 3) and summary["reference_verifier"]["items"] == 2
    assert "reason" in metrics_document(evaluate(RECORDS, meta=False), SETTINGS, {})["reference_verifier"]
