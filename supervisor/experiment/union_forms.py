"""Union fields that report one problem: the form the user wrote, or one line naming every form.

pydantic validates a plain union against every branch and reports each branch's errors.  ``one_of`` makes a
tagged union instead: the branch is chosen from the form of the value (a boolean, an integer, a string, one
of a Literal's strings, an array, a table), so pydantic reports only that branch's problems, and a value of
no branch's form gets one error that names the forms.  The tags pydantic puts in an error's location are
not the user's; ``is_tag`` tells them apart.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, Discriminator, Tag

_TAG = "<form {}>"
_TAG_PATTERN = re.compile(r"<form \d+>")


def is_tag(part: object) -> bool:
    """A location part pydantic added for a ``one_of`` branch (a TOML file has no such key in practice)."""
    return isinstance(part, str) and _TAG_PATTERN.fullmatch(part) is not None


def _kind(branch: Any) -> tuple[Any, Any]:
    """The branch without its Annotated metadata, and its origin (list for list[str], Literal, or itself)."""
    base = get_args(branch)[0] if get_origin(branch) is Annotated else branch
    return base, get_origin(base) or base


def _fits(branch: Any, value: object) -> bool:
    """Whether ``value`` has the branch's form (for a Literal: is one of its values)."""
    base, kind = _kind(branch)
    if kind is Literal:
        return any(type(value) is type(v) and value == v for v in get_args(base))
    if issubclass(kind, BaseModel):
        return isinstance(value, (dict, kind))
    return isinstance(value, kind) and not (kind is int and isinstance(value, bool))   # TOML's true is no count


def _form_texts(branch: Any) -> list[str]:
    base, kind = _kind(branch)
    if kind is Literal:
        return [f'"{v}"' for v in get_args(base)]
    return {bool: ["true", "false"], int: ["an integer"], str: ["a string"], list: ["an array"]}.get(kind, ["a table"])


def one_of(*branches: Any, forms: str | None = None) -> Any:
    """The union of ``branches``, tagged by the form of the value; ``forms`` is the error for a value of
    none of them (default: "must be" and each branch's form)."""
    tags = [_TAG.format(i) for i in range(len(branches))]
    if forms is None:
        texts = [text for branch in branches for text in _form_texts(branch)]
        forms = f"must be {', '.join(texts[:-1])} or {texts[-1]}"

    def form(value: object) -> str | None:
        return next((tag for tag, branch in zip(tags, branches) if _fits(branch, value)), None)

    tagged = tuple(Annotated[branch, Tag(tag)] for tag, branch in zip(tags, branches))
    return Annotated[Union[tagged], Discriminator(form, custom_error_type="form",
                                                  custom_error_message=forms)]
