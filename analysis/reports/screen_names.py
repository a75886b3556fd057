"""A screening design's factors and effects by their names in the experiment (plain, fp), never by the
design's codes (0, 1): one place for the tables and the plots."""

from __future__ import annotations


def level_name(analysis: dict, factor: str, level) -> str:
    """A factor's level by its name in the experiment (plain, fp), not its code (0, 1)."""
    names, code = analysis["factors"][factor], int(level)
    return str(names[code]) if code < len(names) else str(level)


def treatment_name(analysis: dict, levels: dict) -> str:
    """'build=plain, envsize=small'."""
    return ", ".join(f"{f}={level_name(analysis, f, lv)}" for f, lv in levels.items())


def effect_name(analysis: dict, name: str) -> str:
    """'build=1' -> 'build: fp vs plain'; 'build:envsize' -> 'build × envsize'; an alias set, named by its
    members with their signs ('A:B = -C=1'), member by member."""
    if " = " in name:
        return " = ".join(effect_name(analysis, member) for member in name.split(" = "))
    if name.startswith("-"):
        return "-" + effect_name(analysis, name[1:])
    if "=" in name:
        factor, level = name.split("=", 1)
        return f"{factor}: {level_name(analysis, factor, level)} vs {level_name(analysis, factor, 0)}"
    return " × ".join(name.split(":"))
