"""Drop the world's memoised sympy work (and sympy's own cache) once a world is drawn.

Drawing a large world fills bounded caches of parsed, expanded and rendered expressions and
of decided claims (with the drawn proofs, several gigabytes at levels 1–2: a world-model
process that drew its world was at 12.4 GB by training step 271, one that did not at 4.4 GB
by step 250). A long job that draws a world
and then does something else (``proofsmith world model`` trains for an hour) clears them
first, so the training does not run beside memory it will never use.
"""

from __future__ import annotations

import gc


def clear_world_caches() -> None:
    """Empty every cache the world's checker and writers fill, then collect."""
    from sympy.core.cache import clear_cache

    from data.world import checker, claims, expressions
    from data.world.families import text

    for cached in (claims.decided, checker.parse_goal, expressions.parse, expressions.form, expressions.expansion,
                   expressions.render, text.expanded):
        cached.cache_clear()
    clear_cache()
    gc.collect()
