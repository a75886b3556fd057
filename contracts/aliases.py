"""Alias sets: effects a design cannot tell apart, because their contrasts are equal up to sign.

Both sides read aliases alike: ``coldrun check`` groups the contrasts of a
fractional design's words (from its generators' rows), and the analysis
groups the contrasts of the effects it estimates, so an alias set is named
the same way in both.  Pure Python on purpose: the supervisor imports it.

Why not pyDOE3's ``fracfact_aliasing``: it keys each contrast by its exact
bytes, so a generator with a minus sign (``"a b c -abc"``) shows no aliasing
at all, and a word and its negation are reported as separate effects.
"""

from __future__ import annotations

from itertools import combinations
from typing import Mapping, Sequence

# Contrasts are compared after rounding to this many digits (the analysis's are cell-mean weights).
DIGITS = 9


def alias_groups(contrasts: Mapping[str, Sequence[float]]) -> list[list[str]]:
    """Names grouped by contrast up to sign, in first-seen order; a member whose contrast is the first's
    negation is written ``-name``.  A name with an all-zero contrast (nothing to estimate) stands alone."""
    groups: dict[tuple[float, ...], list[str]] = {}
    for name, contrast in contrasts.items():
        key = tuple(round(float(v), DIGITS) + 0.0 for v in contrast)
        negated = tuple(-v + 0.0 for v in key)
        if key in groups:
            groups[key].append(name)
        elif negated in groups and any(key):
            groups[negated].append(f"-{name}")
        else:
            groups[key] = [name]
    return list(groups.values())


def word_contrasts(factors: Sequence[str], rows: Sequence[Sequence[int]], max_order: int
                   ) -> dict[str, list[int]]:
    """±1 contrasts (level 0 -> -1, 1 -> +1) of every main effect and interaction up to ``max_order``
    factors, named ``A`` or ``A:B:...`` in factor order."""
    signs = [[1 if level else -1 for level in row] for row in rows]
    out: dict[str, list[int]] = {}
    for order in range(1, max_order + 1):
        for word in combinations(range(len(factors)), order):
            contrast = []
            for row in signs:
                product = 1
                for j in word:
                    product *= row[j]
                contrast.append(product)
            out[":".join(factors[j] for j in word)] = contrast
    return out


def design_aliases(factors: Sequence[str], rows: Sequence[Sequence[int]], max_order: int = 3) -> list[list[str]]:
    """The alias sets (two or more members) of a 2-level design that hold a main effect or a 2-factor
    interaction, words up to ``max_order`` factors."""
    groups = alias_groups(word_contrasts(factors, rows, max_order))
    return [g for g in groups if len(g) > 1 and any(name.lstrip("-").count(":") <= 1 for name in g)]
