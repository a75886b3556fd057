"""The kinds of experiment, and the one place one is chosen (DESIGN.md "Kinds of experiment").

``kind_for(exp)`` picks the first registered kind whose test accepts the
experiment, else ``Plain``.  A new kind is a module with a subclass of
``Plain`` and one ``register`` line here (or by whoever adds it), naming the
class as "module:Class": its module is imported only when an experiment is of
that kind, so a boot loads its own kind and no other.
"""

from __future__ import annotations

import importlib
from typing import Callable

from supervisor.boot.kinds.plain import Plain
from supervisor.experiment.model import Experiment

__all__ = ["Plain", "kind_for", "register"]

_KINDS: list[tuple[Callable[[Experiment], bool], type[Plain] | str]] = []


def register(kind: type[Plain] | str, applies: Callable[[Experiment], bool]) -> None:
    """Make ``kind`` (a class, or "module:Class" to import when chosen) the kind of every experiment
    ``applies`` accepts (the latest registration is asked first)."""
    _KINDS.insert(0, (applies, kind))


def kind_for(exp: Experiment) -> Plain:
    for applies, kind in _KINDS:
        if applies(exp):
            if isinstance(kind, str):
                module, _, name = kind.partition(":")
                kind = getattr(importlib.import_module(module), name)
            return kind(exp)
    return Plain(exp)


# The model allows at most one of these tables (experiment/model.py refuses the combinations).
register("supervisor.kinds.stop.kind:StopKind", lambda exp: exp.stop is not None)
register("supervisor.kinds.duet.kind:DuetKind", lambda exp: exp.duet is not None)
register("supervisor.kinds.screening.kind:ScreeningKind", lambda exp: exp.screening is not None)
