"""Proof steps as a person writes them, ``Step 3: (a - b)^2 ≥ 0, since a square is never negative.``

A proof is the lines that begin ``Step N:``; anything else (a heading, a sentence of
prose) is commentary and is ignored. A step line is an optional lead-in (``Then``,
``Hence``, ``Note that``, ...), one claim (``data.world.claims``) and an optional reason
after ``by``, ``since``, ``because``, ``as`` or ``using``, or in brackets. A step whose
claim this world cannot read keeps its text and gets no claim: the checker counts it as a
bad step, so unreadable text can never pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from data.world.claims import Claim, ClaimError, parse_claim

FIRST_LEADS = ("", "", "We have ", "Note that ", "First, ")
MIDDLE_LEADS = ("", "Then ", "So ", "Also ", "Next, ")
LAST_LEADS = ("", "Hence ", "Therefore ", "Thus ", "It follows that ", "So ")
BY_CONNECTORS = (", by ", " (by {})")
"""For a reason that is a gerund (``factoring``, ``multiplying out``)."""
USING_CONNECTORS = (", by ", ", using ", " (by {})")
"""For a reason that names a thing (``the binomial formula``, ``steps 1 and 2``)."""
SINCE_CONNECTORS = (", since ", ", because ", ", as ", " (since {})")
"""For a reason that is a sentence (``a square is never negative``)."""

_STEP = re.compile(r"^\s*(?:\*\*)?Step\s+(\d+)\s*(?:\*\*)?\s*[:.)]\s*(?:\*\*)?\s*(.*?)\s*$", re.IGNORECASE)
_LEAD = re.compile(r"^(?:we\s+have|then|so|also|next|first|hence|thus|note\s+that|it\s+follows\s+that|therefore|now|finally|and)\s*,?\s+",
                   re.IGNORECASE)
_CONNECTOR = re.compile(r"(?:,\s*|\s+)(?:by|since|because|as|using)\s+", re.IGNORECASE)
_BRACKETED = re.compile(r"\s*\((?:by|since|because|using)\s+(?P<reason>[^()]+)\)$", re.IGNORECASE)


@dataclass(frozen=True)
class Step:
    number: int
    claim: Claim | None
    """What the step states; None when this world cannot read it."""
    reason: str = ""
    """Why it holds, as written (empty: none given)."""
    text: str = ""
    """The line as written (for a step built here, its rendering)."""

    def __post_init__(self) -> None:
        if self.number < 1:
            raise ValueError(f"steps are numbered from 1, got {self.number}")

    def render(self, style: int = 0, lead: str = "") -> str:
        """The step's line; ``style`` varies the claim's wording and the connector, ``lead`` opens the sentence."""
        if self.claim is None:
            return self.text
        return f"Step {self.number}: {lead}{self.claim.render(style)}{connect(self.reason, style)}."


def connect(reason: str, style: int) -> str:
    """``, by factoring`` / ``, since a square is never negative``: the reason with a connector that fits it."""
    if not reason:
        return ""
    first = reason.split()[0].lower()
    connectors = (BY_CONNECTORS if first.endswith("ing") else USING_CONNECTORS if first in ("the", "steps", "step")
                  else SINCE_CONNECTORS)
    connector = connectors[style % len(connectors)]
    return connector.format(reason) if "{}" in connector else f"{connector}{reason}"


def strip_lead(text: str) -> str:
    while lead := _LEAD.match(text):
        text = text[lead.end():]
    return text


def parse_step_line(number: int, body: str) -> Step:
    """One step from the text after ``Step N:``.

    The reason starts at the first connector (``by``, ``since``, ...) before which a whole
    claim stands, so ``n^3 - n is divisible by 6, since ...`` keeps its ``by 6``.
    """
    text = body.strip().rstrip(".").strip()
    bracketed = _BRACKETED.search(text)
    if bracketed:
        candidates = [(text[: bracketed.start()], bracketed["reason"])]
    else:
        candidates = [(text[: match.start()], text[match.end():]) for match in _CONNECTOR.finditer(text)]
    for claim_text, reason in [*candidates, (text, "")]:
        try:
            return Step(number, parse_claim(strip_lead(claim_text.strip())), reason.strip(), f"Step {number}: {body.strip()}")
        except ClaimError:
            continue
    return Step(number, None, "", f"Step {number}: {body.strip()}")


def step_count(proof: str) -> int:
    """How many ``Step N:`` lines ``proof`` has (without parsing their claims)."""
    return sum(bool(_STEP.match(line)) for line in proof.splitlines())


def parse_steps(proof: str) -> list[Step]:
    """Every ``Step N:`` line of ``proof``, in the order written."""
    steps = []
    for line in proof.splitlines():
        match = _STEP.match(line)
        if match:
            steps.append(parse_step_line(int(match[1]) or 1, match[2]))
    return steps


def render_steps(steps: list[Step] | tuple[Step, ...], style: int = 0) -> str:
    """The proof text, one line per step; ``style`` picks lead-ins, connectors and claim forms, varying from line to line."""
    lines = []
    for index, step in enumerate(steps):
        line_style = style + index * 7 if style else 0
        leads = FIRST_LEADS if index == 0 else LAST_LEADS if index == len(steps) - 1 else MIDDLE_LEADS
        lines.append(step.render(line_style, leads[line_style % len(leads)] if style else ""))
    return "\n".join(lines)
