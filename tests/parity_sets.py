"""Small training sets written by rule, a test fixture: elementary parity and divisibility facts.

``graded_rows`` (pairs 16-47): each statement comes with three proofs whose grade is known by
construction: a complete one (1), one that asserts its key step without justification
(0.5), and one whose key step is false or argues from an example (0).

``rated_rows`` (pairs 0-15, meta-verifier and cold-start rows): graded proofs of other
statements, each with verifier-format analyses giving each score s', rated by
construction against its grade s: s' = s → 1 (accurate); s' < s → 0 (the defects it
reports do not exist); s' > s → 0.5 (no invented defect, but real ones missed and the
score wrong), following DESIGN.md's rating rules.

The proofs are one to three sentences, so a real training step of the 135M model on them
takes seconds: the tests' curriculum. The shipped configs train on the ground-truth world
(``proofsmith world``, bundled in ``data/bundled/world``), whose truth a checker decides.
"""

from __future__ import annotations

from collections.abc import Iterator

from training.role_data.records import verifier_answer

SCORES = (0.0, 0.5, 1.0)


def _facts(a: int, b: int, index: int) -> Iterator[tuple[str, str, str, str]]:
    """(statement, complete proof, proof with a gap, wrong proof) for the pair (a, b); ``index`` keeps statements distinct."""
    yield (
        f"Prove that if m is even and n is even, then m + n is even (for example m = {2 * a}, n = {2 * b}).",
        "Write m = 2k and n = 2l for integers k and l. Then m + n = 2k + 2l = 2(k + l), and k + l is an integer, so m + n is even.",
        "Since m and n are both even, their sum m + n is clearly even as well.",
        f"Take m = {2 * a} and n = {2 * b}: their sum {2 * a + 2 * b} is even, so m + n is always even.",
    )
    yield (
        f"Prove that the product of two odd integers is odd (for example {2 * a + 1} and {2 * b + 1}).",
        "Write the integers as 2k + 1 and 2l + 1. Their product is 4kl + 2k + 2l + 1 = 2(2kl + k + l) + 1, which is odd.",
        "Write the integers as 2k + 1 and 2l + 1. Multiplying them out gives an odd number, so the product is odd.",
        "An odd number times an odd number is odd because odd numbers are never divisible by 2, and products keep that.",
    )
    yield (
        f"Prove that n^2 + n is even for every integer n (for example n = {index + 2}).",
        "n^2 + n = n(n + 1) is a product of two consecutive integers; one of them is even, so the product is even.",
        "n^2 + n = n(n + 1), and a product of two consecutive integers is even, so n^2 + n is even.",
        f"For n = {index + 2} we get {(index + 2) ** 2 + index + 2}, which is even, so n^2 + n is even for every n.",
    )
    yield (
        f"Prove that 3 divides n^3 - n for every integer n (for example n = {index + 3}).",
        "n^3 - n = (n - 1)n(n + 1) is a product of three consecutive integers; one of any three consecutive integers is "
        "a multiple of 3, so 3 divides the product.",
        "n^3 - n = (n - 1)n(n + 1), so it is divisible by 3.",
        "n^3 - n is divisible by 3 because n^3 is always divisible by 3.",
    )


def graded_rows(count: int = 32, start: int = 16) -> list[dict[str, object]]:
    """Pairs ``start`` .. ``start + count - 1`` x 4 statements x 3 proofs, ids stable across runs.

    The defaults leave pairs 0-15 to ``rated_rows``, so SFT on the rated set never sees a
    statement of the graded set (whose held-out part measures verifier agreement).
    """
    rows: list[dict[str, object]] = []
    for index in range(start, start + count):
        a, b = index % 7 + 1, index // 7 + 2
        for fact, (statement, complete, gap, wrong) in enumerate(_facts(a, b, index)):
            for grade, proof in ((1.0, complete), (0.5, gap), (0.0, wrong)):
                rows.append({"id": f"s{index}-f{fact}-g{grade:g}", "problem": statement, "proof": proof, "score": grade})
    return rows


def construction_rating(claimed: float, true: float) -> float:
    if claimed == true:
        return 1.0
    return 0.0 if claimed < true else 0.5


def rated_rows(count: int = 16) -> list[dict[str, object]]:
    """Every graded proof of pairs 0 .. ``count - 1`` x an analysis for each score."""
    rows: list[dict[str, object]] = []
    for graded in graded_rows(count, start=0):
        for claimed in SCORES:
            rows.append({
                "id": f"{graded['id']}-c{claimed:g}", "problem": graded["problem"], "proof": graded["proof"],
                "score": graded["score"], "analysis": verifier_answer(claimed), "rating": construction_rating(claimed, float(graded["score"])),  # type: ignore[arg-type]
            })
    return rows
