"""A ground-truth proof world: problems whose truth sympy decides, and proofs whose score a checker decides.

Real olympiad proofs need a strong model and a human grader; here a computer algebra
system is the grader, so every claim about verification can be measured exactly on a CPU.

- ``expressions``: plain-text math (``a^2 - 2ab + b^2``) to sympy and back, safe on any text.
- ``claims``: the four kinds of statement a step makes (equality, ``≥``, divisibility,
  solution set), how each is written, and whether it is true.
- ``steps``: ``Step N: claim, by reason.`` lines, written in varied wording and read back.
- ``checker``: the score 0 / 0.5 / 1 and the first bad step of a proof, from its text alone
  (what the scores mean is written down there).
- ``families``: six statement families (identity, inequality, divisibility, equation,
  induction, and arithmetic, drawn only when asked for), several templates each, at three
  difficulty levels, with correct proofs; ``problems`` holds the records they share.
- ``defects``: seven named kinds of flaw injected into a correct proof at a chosen step.
- ``proofs``: the world's data, correct and flawed proofs with their checked truth.
- ``splits``: train and test splits that no test problem crosses, level by level.

Ground floor: sympy only, no role formats (turning these into verifier, meta-verifier and
generator data belongs to ``training``; truth metrics to ``eval``).
"""
