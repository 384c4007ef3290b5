"""report.html: pure checks on the HTML, then a real headless Chromium that must render it.

The browser tests open a copy of the report with a probe script appended (the report itself
has no script): on load the probe writes what the browser rendered — each image's decoded
size and box, each table's box and cell text — as JSON into the page, and ``--dump-dom``
prints the page. Without Chromium they skip, saying how to install it, unless ``CI`` is set:
then they fail (``tests/browser.py``; CI's .ci/run installs it).
"""

from __future__ import annotations

import base64
import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from browser import chromium
from eval import plots
from eval.metrics import VerifiedItem, agreement_by_sample_count
from eval.report import MAX_CELL_CHARS, calibration, format_value, write_prover_report, write_verifier_report

# Majority per item: a 1 (right), b 1 (right; one format failure), c 0 (right), d 1 (human 0.5),
# e 1 (human 0). Accuracy 3/5; confusion rows human 0 [1,0,1], 0.5 [0,0,1], 1 [0,0,2]; chance
# agreement (2*1 + 1*0 + 2*4)/25 = 0.4, so kappa (0.6 - 0.4)/0.6 = 1/3. All-pass: a and e
# (b's format failure is not a pass), e wrongly, so the false-positive rate is 1/2.
ITEMS = [
    VerifiedItem(1, (1, 1, 1, 1), "a"),
    VerifiedItem(1, (1, 0.5, 1, None), "b"),
    VerifiedItem(0, (0, 0, 1, 0), "c"),
    VerifiedItem(0.5, (0.5, 1, 1, 1), "d"),
    VerifiedItem(0, (1, 1, 1, 1), "e"),
]
SETTINGS = {"model": "SmolLM2-135M", "engine": "transformers", "data path": "grades.csv",
            "grade mapping": "almost-half", "n": 4, "meta m": None}
PROVER_SUMMARY = {
    "total": [{"problems": 3, "mean score": 0.5}],
    "by level": [{"level": "easy", "problems": 2, "mean score": 0.75}, {"level": "hard", "problems": 1, "mean score": None}],
    "by category": [{"category": "algebra", "problems": 3, "mean score": 0.5}],
}
PROVER_ROWS = [{"id": "p1", "level": "easy", "score": 1.0}, {"id": "p2", "level": "easy", "score": 0.5},
               {"id": "p3", "level": "hard", "score": None}]
ALTS = ["confusion matrix", "calibration plot", "metrics against n"]


class _Page(HTMLParser):
    """Tags, attributes and table cells of a page, without a browser."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.tables: dict[str, list[list[str]]] = {}
        self._table: list[list[str]] | None = None
        self._cell: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self._table = self.tables.setdefault(dict(attrs).get("id") or "", [])
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._table is not None:
            self._table[-1].append("".join(self._cell))
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _verifier_page(out_dir: Path, items: list[VerifiedItem], settings: dict[str, Any] = SETTINGS) -> str:
    return write_verifier_report(out_dir, settings, agreement_by_sample_count(items), items).read_text(encoding="utf-8")


def _column(table: list[list[str]], index: int) -> list[str]:
    return [row[index] for row in table[1:]]


def _as_dict(table: list[list[str]]) -> dict[str, str]:
    return {row[0]: row[1] for row in table[1:]}


def test_format_value() -> None:
    assert [format_value(value) for value in (None, float("nan"), 0.5, 1 / 3, 3, "x")] == \
        ["n/a", "n/a", "0.500", "0.333", "3", "x"]


def test_calibration_averages_item_means_per_human_class() -> None:
    # human 0: c 0.25, e 1 -> 0.625; human 0.5: d 0.875; human 1: a 1, b 2.5/3 -> 11/12.
    points = calibration(ITEMS)
    assert [(score, count) for score, _, count in points] == [(0, 2), (0.5, 1), (1, 2)]
    assert [mean for _, mean, _ in points] == pytest.approx([0.625, 0.875, 11 / 12])
    assert calibration(ITEMS, samples=1)[0][1] == 0.5  # first samples of c and e: 0 and 1
    assert calibration([VerifiedItem(1, (None,))]) == [(0, None, 0), (0.5, None, 0), (1, None, 0)]


def test_verifier_report_tables_and_plots(tmp_path: Path) -> None:
    path = write_verifier_report(tmp_path, SETTINGS, agreement_by_sample_count(ITEMS), ITEMS)
    page = _Page(path.read_text(encoding="utf-8"))
    assert path == tmp_path / "report.html"
    assert set(page.tables) == {"settings", "headline", "confusion", "per-class", "calibration", "metric-vs-n", "field-vs-n"}
    assert _as_dict(page.tables["settings"]) == {
        "model": "SmolLM2-135M", "engine": "transformers", "data path": "grades.csv",
        "grade mapping": "almost-half", "n": "4", "meta m": "n/a"}
    headline = _as_dict(page.tables["headline"])
    assert (headline["items"], headline["accuracy (majority)"], headline["Cohen's kappa"]) == ("5", "0.600", "0.333")
    assert headline["all-pass false-positive rate"] == "0.500"
    assert page.tables["confusion"][1:] == [["0", "1", "0", "1"], ["0.5", "0", "0", "1"], ["1", "0", "0", "2"]]
    assert page.tables["per-class"][2] == ["0.5", "1", "n/a", "0.000"]  # nothing predicted 0.5: precision undefined
    assert _column(page.tables["metric-vs-n"], 0) == ["1", "2", "4"]
    images = [attrs for tag, attrs in page.tags if tag == "img"]
    assert [image["alt"] for image in images] == ALTS


def test_report_is_self_contained(tmp_path: Path) -> None:
    text = _verifier_page(tmp_path, ITEMS)
    tags = _Page(text).tags
    assert not {tag for tag, _ in tags} & {"script", "link", "iframe", "object", "embed", "base"}
    assert not [attrs for _, attrs in tags if "href" in attrs] and "url(" not in text
    sources = [attrs["src"] or "" for _, attrs in tags if "src" in attrs]
    assert len(sources) == 3
    for source in sources:
        prefix = "data:image/png;base64,"
        assert source.startswith(prefix) and base64.b64decode(source[len(prefix):]).startswith(b"\x89PNG\r\n\x1a\n")


def test_strings_from_data_are_escaped(tmp_path: Path) -> None:
    attack = "<script>alert(1)</script>"
    settings = {"model": attack, "<b>key</b>": 'say "a & b"'}
    verifier = _verifier_page(tmp_path / "v", ITEMS, settings)
    # "$x^$" as a chart label would be parsed as (broken) math by matplotlib unless escaped.
    summary = {attack: [{attack: "$x^$", "mean score": 1.0}, {attack: attack, "mean score": 0.5}]}
    rows = [{"id": '<img src=x onerror="alert(1)">', attack: 1}]
    prover = write_prover_report(tmp_path / "p", settings, summary, rows, "mean score").read_text(encoding="utf-8")
    for text in (verifier, prover):
        assert attack not in text and "<b>key</b>" not in text and "<img src=x" not in text
        assert html.escape(attack) in text and _Page(text).tables["settings"][2] == ["<b>key</b>", 'say "a & b"']
    assert _Page(prover).tables["rows"] == [["id", attack], ['<img src=x onerror="alert(1)">', "1"]]


def test_no_items_and_single_n_with_undefined_metrics(tmp_path: Path) -> None:
    empty = _Page(_verifier_page(tmp_path / "empty", []))
    assert set(empty.tables) == {"settings"} and not [tag for tag, _ in empty.tags if tag == "img"]
    # Every human score is 1 and so is every prediction: kappa and AUROC are undefined.
    items = [VerifiedItem(1, (1,), "x"), VerifiedItem(1, (1,), "y")]
    page = _Page(_verifier_page(tmp_path / "one", items))
    headline = _as_dict(page.tables["headline"])
    assert headline["Cohen's kappa"] == headline["AUROC (human = 1 vs rest, by mean score)"] == "n/a"
    assert headline["accuracy (majority)"] == "1.000"
    assert page.tables["metric-vs-n"][1][:6] == ["1", "1.000", "1.000", "n/a", "n/a", "n/a"]
    assert page.tables["calibration"][1] == ["0", "0", "n/a"]
    assert len([tag for tag, _ in page.tags if tag == "img"]) == 3


def test_failed_build_keeps_the_old_report_and_leaves_no_partial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    metrics = agreement_by_sample_count(ITEMS)
    earlier = write_verifier_report(tmp_path, SETTINGS, metrics, ITEMS).read_bytes()

    def broken(*args: Any) -> bytes:
        raise RuntimeError("plot failed")

    monkeypatch.setattr(plots, "metric_vs_n_png", broken)
    with pytest.raises(RuntimeError, match="plot failed"):
        write_verifier_report(tmp_path, SETTINGS, metrics, ITEMS)
    with pytest.raises(RuntimeError, match="plot failed"):
        write_verifier_report(tmp_path / "fresh", SETTINGS, metrics, ITEMS)
    assert (tmp_path / "report.html").read_bytes() == earlier
    assert sorted(path.name for path in tmp_path.iterdir()) == ["report.html"]


def test_prover_report_tables_chart_and_long_cells(tmp_path: Path) -> None:
    rows = [*PROVER_ROWS, {"id": "p4", "proof": "x" * (MAX_CELL_CHARS + 50)}]
    page = _Page(write_prover_report(tmp_path, SETTINGS, PROVER_SUMMARY, rows, "mean score").read_text(encoding="utf-8"))
    assert set(page.tables) == {"settings", "summary-total", "summary-by-level", "summary-by-category", "rows"}
    assert page.tables["summary-by-level"] == [
        ["level", "problems", "mean score"], ["easy", "2", "0.750"], ["hard", "1", "n/a"]]
    assert page.tables["rows"][0] == ["id", "level", "score", "proof"]  # columns in order of first appearance
    assert page.tables["rows"][3][2] == "n/a" and page.tables["rows"][4][3] == "x" * MAX_CELL_CHARS + "…"
    # Only "by level" has more than one row to compare.
    assert [attrs["alt"] for tag, attrs in page.tags if tag == "img"] == ["mean score by level"]


# --- a real browser ---------------------------------------------------------------------------

PROBE = """<script>
// Synchronous on purpose: "load" waits for every image, and --dump-dom does not wait for promises.
addEventListener("load", () => {
  const images = [...document.images];
  const box = (element) => element.getBoundingClientRect();
  const result = {
    images: images.map((image) => ({alt: image.alt, complete: image.complete, naturalWidth: image.naturalWidth,
      naturalHeight: image.naturalHeight, width: box(image).width, height: box(image).height,
      visibility: getComputedStyle(image).visibility})),
    tables: Object.fromEntries([...document.querySelectorAll("table")].map((table) => [table.id,
      {height: box(table).height,
       rows: [...table.rows].map((row) => [...row.cells].map((cell) => cell.innerText.trim()))}])),
  };
  const out = document.createElement("pre");
  out.id = "probe-result";
  out.textContent = JSON.stringify(result);
  document.body.append(out);
});
</script>"""


def _chromium(*args: str, profile: Path) -> str:
    return chromium(*args, profile=profile, purpose="report.html renders")


def _rendered(report: Path, tmp_path: Path) -> dict[str, Any]:
    """What Chromium rendered of ``report``: a copy with the probe appended, dumped after load."""
    probe = tmp_path / "probe.html"
    probe.write_text(report.read_text(encoding="utf-8").replace("</body>", PROBE + "\n</body>"), encoding="utf-8")
    dom = _chromium("--dump-dom", "--virtual-time-budget=10000", probe.as_uri(), profile=tmp_path / "profile")
    found = re.search(r'<pre id="probe-result">(.*?)</pre>', dom, re.S)
    assert found, f"the probe did not run; Chromium printed: {dom[:2000]}"
    return json.loads(html.unescape(found.group(1)))


def _assert_images_render(images: list[dict[str, Any]]) -> None:
    for image in images:
        assert image["complete"] and image["naturalWidth"] > 0 and image["naturalHeight"] > 0, image
        assert image["width"] > 50 and image["height"] > 50 and image["visibility"] == "visible", image


def test_chromium_renders_verifier_report(tmp_path: Path) -> None:
    report = write_verifier_report(tmp_path / "run", SETTINGS, agreement_by_sample_count(ITEMS), ITEMS)
    rendered = _rendered(report, tmp_path)
    assert [image["alt"] for image in rendered["images"]] == ALTS
    _assert_images_render(rendered["images"])
    tables = rendered["tables"]
    assert set(tables) == {"settings", "headline", "confusion", "per-class", "calibration", "metric-vs-n", "field-vs-n"}
    assert all(table["height"] > 0 for table in tables.values())
    headline = _as_dict(tables["headline"]["rows"])
    assert (headline["accuracy (majority)"], headline["Cohen's kappa"], headline["all-pass false-positive rate"]) == \
        ("0.600", "0.333", "0.500")
    assert _column(tables["metric-vs-n"]["rows"], 0) == ["1", "2", "4"]

    # A screenshot that is all one colour would mean nothing was painted.
    from PIL import Image

    shot = tmp_path / "shot.png"
    _chromium(f"--screenshot={shot}", "--window-size=1200,2400", report.as_uri(), profile=tmp_path / "profile")
    with Image.open(shot) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 20


def test_chromium_renders_prover_report(tmp_path: Path) -> None:
    report = write_prover_report(tmp_path / "run", SETTINGS, PROVER_SUMMARY, PROVER_ROWS, "mean score")
    rendered = _rendered(report, tmp_path)
    _assert_images_render(rendered["images"])
    assert len(rendered["images"]) == 1
    tables = rendered["tables"]
    assert tables["summary-total"]["rows"] == [["problems", "mean score"], ["3", "0.500"]]
    assert tables["summary-by-category"]["rows"][1] == ["algebra", "3", "0.500"]
    assert len(tables["rows"]["rows"]) == 4 and all(table["height"] > 0 for table in tables.values())
