import pytest

from generator.parse import GeneratedProof, parse_generation

OPENER = "Here is my evaluation of the solution:"
CLOSER = "Based on my evaluation, the final overall score should be:"
PROOF = "By induction on n. The base case n = 1 holds since 1 = 1^2.\nAssume it for n; then the sum is (n+1)^2."


def self_evaluation(box: str, analysis: str = "Every step is justified.") -> str:
    return f"{OPENER}\n{analysis}\n{CLOSER} \\boxed{{{box}}}"


def generation(
    proof: str = PROOF,
    box: str = "1",
    solution_heading: str = "## Solution",
    evaluation_heading: str = "## Self Evaluation",
) -> str:
    return f"{solution_heading}\n\n{proof}\n\n{evaluation_heading}\n\n{self_evaluation(box)}"


def has_error(parsed: GeneratedProof, fragment: str) -> bool:
    return any(fragment in error for error in parsed.all_format_errors)


@pytest.mark.parametrize(
    "box, score", [("0", 0.0), ("0.5", 0.5), ("1", 1.0), ("\\frac{1}{2}", 0.5)], ids=["0", "0.5", "1", "frac"]
)
def test_normal_output(box: str, score: float) -> None:
    parsed = parse_generation(generation(box=box), "stop")
    assert parsed.proof == PROOF
    assert parsed.self_score == score
    assert parsed.format_ok
    assert parsed.all_format_errors == ()
    assert parsed.self_evaluation.analysis == "Every step is justified."


@pytest.mark.parametrize(
    "solution_heading, evaluation_heading",
    [
        ("## Solution", "### Self-Evaluation"),
        ("# SOLUTION", "#### self evaluation"),
        ("## **Solution**", "## **Self Evaluation**:"),
        ("## Solution:", "## Self-evaluation"),
        ("  ## Solution  ", "## SelfEvaluation"),
    ],
    ids=["h3-hyphen", "levels-and-case", "bold-and-colon", "colon-and-lower-hyphen", "indent-and-no-space"],
)
def test_heading_variants(solution_heading: str, evaluation_heading: str) -> None:
    parsed = parse_generation(generation(box="0.5", solution_heading=solution_heading, evaluation_heading=evaluation_heading))
    assert parsed.proof == PROOF
    assert parsed.self_score == 0.5
    assert parsed.format_ok


@pytest.mark.parametrize(
    "text, proof, score, fragment",
    [
        (f"{PROOF}\n\n## Self Evaluation\n{self_evaluation('1')}", PROOF, 1.0, "missing '## Solution'"),
        (f"## Solution\n{PROOF}", PROOF, None, "missing '## Self Evaluation'"),
        (PROOF, PROOF, None, "missing '## Self Evaluation'"),
        (f"## Solution\n\n## Self Evaluation\n{self_evaluation('0')}", "", 0.0, "solution section is empty"),
        (f"## Solution\n{PROOF}\n## Self Evaluation\nLooks right to me.", PROOF, None, "closing phrase"),
        ("", "", None, "missing '## Solution'"),
    ],
    ids=["no-solution-heading", "no-self-evaluation", "no-headings", "empty-solution", "self-evaluation-without-verdict", "empty"],
)
def test_missing_sections(text: str, proof: str, score: float | None, fragment: str) -> None:
    parsed = parse_generation(text)
    assert parsed.proof == proof
    assert parsed.self_score == score
    assert not parsed.format_ok
    assert has_error(parsed, fragment), parsed.all_format_errors


def test_fake_self_evaluation_inside_proof_is_part_of_the_proof() -> None:
    fake = f"## Self Evaluation\n{self_evaluation('1', 'Flawless.')}"
    proof = f"{PROOF}\n\n{fake}\n\nA remark that continues the proof."
    text = f"## Solution\n{proof}\n\n## Self Evaluation\n{self_evaluation('0', 'The remark is unproved.')}"
    parsed = parse_generation(text, "stop")
    assert parsed.self_score == 0.0
    assert parsed.format_ok
    assert parsed.proof == proof
    assert fake in parsed.proof
    assert parsed.self_evaluation.analysis == "The remark is unproved."


@pytest.mark.parametrize(
    "self_eval, score, format_ok",
    [
        (self_evaluation("0"), 0.0, True),
        ("I am confident in every step.", None, False),
        (f"{OPENER}\nThe proof is fine.", None, False),
    ],
    ids=["real-self-evaluation-0", "self-evaluation-without-markers", "self-evaluation-without-closer"],
)
def test_marker_phrases_inside_proof_do_not_leak(self_eval: str, score: float | None, format_ok: bool) -> None:
    misspelt = "Based on my evaluation, the final overal score should be:"
    proof = f"{PROOF}\n{OPENER} perfect.\n{CLOSER} \\boxed{{1}}\n{misspelt} \\boxed{{1}}"
    parsed = parse_generation(f"## Solution\n{proof}\n\n## Self Evaluation\n{self_eval}")
    assert parsed.proof == proof
    assert parsed.self_score == score
    assert parsed.format_ok is format_ok


@pytest.mark.parametrize(
    "text",
    [
        generation(box="1"),
        generation(box="1").rsplit("\\boxed", 1)[0],
        f"## Solution\n{PROOF}",
        f"## Solution\n{PROOF}\n## Self Evaluation\n{OPENER}\nStep 1 is",
    ],
    ids=["complete-looking", "cut-before-box", "cut-before-self-evaluation", "cut-mid-analysis"],
)
def test_truncated_output_has_no_self_score(text: str) -> None:
    parsed = parse_generation(text, "length")
    assert parsed.self_score is None
    assert not parsed.format_ok
    assert has_error(parsed, "truncated")


@pytest.mark.parametrize(
    "text, proof, score, format_ok",
    [
        (
            f"<think>Try induction.\n## Solution\nfake\n## Self Evaluation\n{self_evaluation('1')}</think>\n"
            + generation(box="0.5"),
            PROOF, 0.5, True,
        ),
        (f"<think>a</think><think>b</think>{generation(box='0')}", PROOF, 0.0, True),
        (f"<think>Try induction.\n{generation(box='1')}", "", None, False),
    ],
    ids=["sections-inside-think-ignored", "two-think-blocks", "unclosed-think"],
)
def test_think_blocks(text: str, proof: str, score: float | None, format_ok: bool) -> None:
    parsed = parse_generation(text)
    assert parsed.proof == proof
    assert parsed.self_score == score
    assert parsed.format_ok is format_ok


def test_solution_heading_after_self_evaluation() -> None:
    text = f"## Self Evaluation\n{self_evaluation('1')}\n\n## Solution\n{PROOF}"
    parsed = parse_generation(text)
    assert parsed.self_score is None
    assert not parsed.format_ok
    assert has_error(parsed, "'## Solution' comes after the self-evaluation")


def test_solution_heading_repeated_inside_proof_uses_first() -> None:
    proof = f"{PROOF}\n## Solution\nA second attempt."
    parsed = parse_generation(generation(proof=proof))
    assert parsed.proof == proof
    assert parsed.self_score == 1.0


def test_headings_must_be_lines_of_their_own() -> None:
    proof = f"{PROOF} We skip the ## Self Evaluation here."
    parsed = parse_generation(generation(proof=proof, box="0"))
    assert parsed.proof == proof
    assert parsed.self_score == 0.0
