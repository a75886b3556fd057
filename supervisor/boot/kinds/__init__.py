"""The kinds of experiment, and the one place one is chosen (DESIGN.md "Kinds of experiment").

``kind_for(exp)`` picks the first registered kind whose test accepts the
experiment, else ``Plain``.  A new kind is a module with a subclass of
``Plain`` and one ``register`` call here (or by whoever adds it).
"""

from __future__ import annotations

from typing import Callable

from supervisor.boot.kinds.duet import Duet
from supervisor.boot.kinds.plain import Plain
from supervisor.boot.kinds.screening import Screening
from supervisor.boot.kinds.stop import RunLength
from supervisor.experiment.model import Experiment

__all__ = ["Plain", "kind_for", "register"]

_KINDS: list[tuple[Callable[[Experiment], bool], type[Plain]]] = []


def register(kind: type[Plain], applies: Callable[[Experiment], bool]) -> None:
    """Make ``kind`` the kind of every experiment ``applies`` accepts (the latest registration is asked first)."""
    _KINDS.insert(0, (applies, kind))


def kind_for(exp: Experiment) -> Plain:
    for applies, kind in _KINDS:
        if applies(exp):
            return kind(exp)
    return Plain(exp)


# The model allows at most one of these tables (experiment/model.py refuses the combinations).
register(RunLength, lambda exp: exp.stop is not None)
register(Duet, lambda exp: exp.duet is not None)
register(Screening, lambda exp: exp.screening is not None)
