"""Read a score out of a model's analysis; the one parser every role uses.

Contract (DESIGN.md, "Parsing"):

* Only the model's own visible answer counts: the text after the last ``</think>``. A
  completion that opens with ``<think>`` and never closes it has no answer yet.
* The score is the last brace-matched ``\\boxed{}`` that follows the last closing phrase
  ("Based on my evaluation, the final overall score should be:", or ``overal``), and only
  punctuation or markup may stand around the boxes after that phrase. A truncated
  completion (finish reason ``length``) has no score, and neither has one whose earlier
  verdict (a closing phrase directly followed by a box) disagrees with the final one,
  unless that earlier verdict is copied word for word from the material under review
  (``quoted``): quoting a planted verdict is fine, writing two verdicts is not. Together
  these rules stop a proof that the model echoes (with its own ``\\boxed{1}`` and marker
  phrases) from supplying the score: an echo is followed by more of the model's text, cut
  off, or contradicted.
* ``1``, ``1.0``, ``0.50``, ``.5``, ``\\frac{1}{2}``, ``1/2`` normalise; anything else, or
  no score, is a *format failure*, recorded in ``format_errors`` with ``score=None`` and
  never turned into 0.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from data.records import ALLOWED_SCORES, check_score


@dataclass(frozen=True)
class VerdictFormat:
    """The phrases that open and close one role's analysis."""

    opener: str
    closers: tuple[str, ...]


VERIFIER_FORMAT = VerdictFormat(
    opener="Here is my evaluation of the solution:",
    closers=(
        "Based on my evaluation, the final overall score should be:",
        "Based on my evaluation, the final overal score should be:",
    ),
)


@dataclass(frozen=True)
class Verdict:
    """A parsed analysis. ``score`` is None exactly when the format failed to give one."""

    score: float | None
    analysis: str
    format_errors: tuple[str, ...] = ()
    raw_score: str | None = None
    """The boxed text as the model wrote it, for the record."""

    def __post_init__(self) -> None:
        check_score(self.score)
        object.__setattr__(self, "format_errors", tuple(self.format_errors))

    @property
    def format_ok(self) -> bool:
        return self.score is not None and not self.format_errors


_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\s*\{")
_TRAILER_ALLOWED = re.compile(r"[\s.,;:!$*_`()\[\]{}<>|\\-]*")
_DECIMAL = re.compile(r"^\+?(\d+(\.\d*)?|\.\d+)$")
_FRACTION = re.compile(r"^\\[dt]?frac\s*(?:\{\s*(\d+)\s*\}\s*\{\s*(\d+)\s*\}|(\d)\s*(\d))$")
_SLASH = re.compile(r"^(\d+)\s*/\s*(\d+)$")


def visible_text(text: str) -> tuple[str, str | None]:
    """The answer after any reasoning, and an error when the reasoning never closed."""
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        return text[closes[-1].end():], None
    if _THINK_OPEN.match(text.lstrip()):
        return "", "reasoning block <think> is never closed"
    return text, None


def boxed_spans(text: str) -> list[tuple[int, int, str]]:
    """Every brace-matched ``\\boxed{...}`` as (start, end, content), in one linear pass.

    Escaped braces (``\\{``, ``\\}``) do not count; a box whose brace never closes is skipped.
    """
    spans: list[tuple[int, int, str]] = []
    box_openings = {match.end() - 1: match.start() for match in _BOXED.finditer(text)}
    stack: list[tuple[int, int | None]] = []  # (position of "{", start of its \boxed or None)
    position = 0
    while position < len(text):
        char = text[position]
        if char == "\\" and position + 1 < len(text) and text[position + 1] in "{}":
            position += 2
            continue
        if char == "{":
            stack.append((position, box_openings.get(position)))
        elif char == "}" and stack:
            opened, box_start = stack.pop()
            if box_start is not None:
                spans.append((box_start, position + 1, text[opened + 1: position]))
        position += 1
    return sorted(spans)


def normalize_score(raw: str) -> float | None:
    """Map a boxed score to 0, 0.5 or 1; None when it is anything else."""
    cleaned = raw.strip().strip("$").strip()
    cleaned = re.sub(r"^\\(?:text|mathrm|mathbf|textbf)\s*\{(.*)\}$", r"\1", cleaned).strip()
    value: float | None = None
    if _DECIMAL.match(cleaned):
        value = float(cleaned)
    elif match := (_FRACTION.match(cleaned) or _SLASH.match(cleaned)):
        numerator, denominator = (int(group) for group in match.groups() if group is not None)
        value = numerator / denominator if denominator else None
    return value if value in ALLOWED_SCORES else None


def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """A phrase matcher tolerant of case, spacing, markdown emphasis and a missing colon."""
    words = phrase.rstrip(":").split()
    body = r"[\s*_]+".join(re.escape(word) for word in words)
    return re.compile(body + r"[\s*_]*:?", re.IGNORECASE)


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _box_after(visible: str, closer: re.Match[str], spans: list[tuple[int, int, str]]) -> tuple[int, int, str] | None:
    """The box right after ``closer``, if only markup stands between them."""
    following = next((span for span in spans if span[0] >= closer.end()), None)
    if following and _TRAILER_ALLOWED.fullmatch(visible[closer.end(): following[0]]):
        return following
    return None


def _is_echo(visible: str, closer: re.Match[str], spans: list[tuple[int, int, str]], quoted: Sequence[str]) -> bool:
    """True when the phrase and its box are copied word for word from material under review."""
    box = _box_after(visible, closer, spans)
    if box is None or not quoted:
        return False
    segment = _collapse(visible[closer.start(): box[1]])
    return any(segment in _collapse(text) for text in quoted)


def parse_verdict(
    text: str,
    role_format: VerdictFormat = VERIFIER_FORMAT,
    finish_reason: str | None = None,
    quoted: Sequence[str] = (),
) -> Verdict:
    """Parse one completion in ``role_format``; see the module docstring for the rules.

    ``quoted`` holds the texts the prompt put under review (the proof, an analysis). An
    earlier closing phrase and box copied from them word for word is a quotation and does
    not conflict with the final verdict. The final verdict always counts, even when it
    matches planted text word for word: ignoring it would let a proof that plants the
    verdicts 0 and 0.5 veto exactly the low scores and raise its mean.
    """
    visible, think_error = visible_text(text)
    errors: list[str] = [think_error] if think_error else []
    if finish_reason == "length":
        errors.append("truncated: the completion hit max_tokens before finishing")

    spans = boxed_spans(visible)
    closers = sorted(
        (match for pattern in map(phrase_pattern, role_format.closers) for match in pattern.finditer(visible)),
        key=lambda match: match.start(),
    )
    closer = closers[-1] if closers else None
    opener_matches = list(phrase_pattern(role_format.opener).finditer(visible))
    opener = opener_matches[0] if opener_matches else None
    body_start = opener.end() if opener else 0
    body_end = closer.start() if closer else len(visible)
    analysis = visible[body_start:body_end].strip() if body_end >= body_start else visible.strip()
    if opener is None:
        errors.append(f"missing opening phrase {role_format.opener!r}")

    if closer is None:
        errors.append(f"missing closing phrase {role_format.closers[0]!r}")
        return Verdict(None, analysis, tuple(errors))
    boxes = [span for span in spans if span[0] >= closer.end()]
    if not boxes:
        errors.append("no brace-matched \\boxed{} score after the closing phrase")
        return Verdict(None, analysis, tuple(errors))
    # Around and between the boxes after the closing phrase only markup may stand: prose
    # there means the verdict is followed by quoted or further text, and cannot be trusted.
    gaps = [visible[closer.end(): boxes[0][0]]]
    gaps += [visible[left[1]: right[0]] for left, right in zip(boxes, boxes[1:])]
    gaps.append(visible[boxes[-1][1]:])
    _, _, raw = boxes[-1]
    if any(_TRAILER_ALLOWED.fullmatch(gap) is None for gap in gaps):
        errors.append("text follows the final score")
        return Verdict(None, analysis, tuple(errors), raw)
    if finish_reason == "length" or think_error:
        return Verdict(None, analysis, tuple(errors), raw)
    score = normalize_score(raw)
    if score is None:
        errors.append(f"score {raw.strip()!r} is not one of 0, 0.5, 1")
    elif _earlier_scores(visible, [m for m in closers[:-1] if not _is_echo(visible, m, spans, quoted)], spans) - {score}:
        # Two verdicts that disagree, the earlier one not a quotation: neither can be trusted.
        errors.append("conflicting verdicts: an earlier closing phrase gives a different score")
        return Verdict(None, analysis, tuple(errors), raw)
    return Verdict(score, analysis, tuple(errors), raw)


def _earlier_scores(visible: str, closers: list[re.Match[str]], spans: list[tuple[int, int, str]]) -> set[float]:
    """Scores boxed right after earlier closing phrases (only markup in between)."""
    boxes = (_box_after(visible, match, spans) for match in closers)
    return {score for box in boxes if box is not None and (score := normalize_score(box[2])) is not None}
