"""Read a Krun-era (Python 2) config as Python 3, as Python 2 would have read it.

Krun ran its configs under Python 2.7, so the paper's own files use what Python 3 refuses: indentation
mixing tabs and spaces (Python 2 put tab stops every 8 columns), print and exec statements, ``except E,
e:`` and ``0755``.  lib2to3 would do this, but Python 3.13 removed it; these are the few forms a config
uses, so each is rewritten on the line Python 3's compiler points at, one at a time, and only after that
compiler refused the file: a Python 3 config is never touched.  Every rewrite is returned as a note
(file:line and what was read how), so nothing is changed silently.  What is not one of these forms
stays a syntax error, reported with its file and line.
"""

from __future__ import annotations

import re

TAB_STOP = 8          # Python 2's tokenizer: a tab advances to the next multiple of 8 columns
MAX_REWRITES = 200    # a file needing more is not a config this was meant for

_PRINT = re.compile(r"^(\s*)print\b(?!\s*\()\s*(.*)$")
_EXEC = re.compile(r"^(\s*)exec\b(?!\s*\()\s+(.+?)(?:\s+in\s+(.+))?$")
_EXCEPT = re.compile(r"^(\s*except\s+)([\w.]+|\([^)]*\))\s*,\s*(\w+)\s*:")
_OCTAL = re.compile(r"(?<![\w.])0([0-7]+)\b")


def _expand_indent(line: str) -> str:
    """The line's leading whitespace with Python 2's tab stops, the rest unchanged."""
    body = line.lstrip(" \t\f")
    column = 0
    for ch in line[:len(line) - len(body)]:
        column = (column // TAB_STOP + 1) * TAB_STOP if ch == "\t" else column + 1
    return " " * column + body


def _split_comment(text: str) -> tuple[str, str]:
    """(code, comment) of one line, the comment starting at the first # outside a string literal."""
    quote = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return text[:i].rstrip(), "  " + text[i:]
        i += 1
    return text.rstrip(), ""


def _print_call(args: str) -> str:
    """A print statement's operands as a print() call's arguments.  (``print >>f, x`` and a bare
    ``print`` are valid Python 3 expressions, so the compiler never points at them.)"""
    end = ""
    if args.endswith(","):          # Python 2: a trailing comma printed a space, not a newline
        args, end = args[:-1].rstrip(), 'end=" "'
    return f"print({', '.join(p for p in (args, end) if p)})"


def _rewrite(line: str, message: str) -> tuple[str, str] | None:
    """(new line, what was read how) for the Python 2 form Python 3's ``message`` is about, or None."""
    code, comment = _split_comment(line)
    if "print" in message and (m := _PRINT.match(code)):
        return f"{m.group(1)}{_print_call(m.group(2))}{comment}", "print statement read as print(...)"
    if "exec" in message and (m := _EXEC.match(code)):
        args = m.group(2) + (f", {m.group(3)}" if m.group(3) else "")
        return f"{m.group(1)}exec({args}){comment}", "exec statement read as exec(...)"
    if (m := _EXCEPT.match(code)):
        new = _EXCEPT.sub(lambda g: f"{g.group(1)}{g.group(2)} as {g.group(3)}:", code, count=1)
        return new + comment, f"`except {m.group(2)}, {m.group(3)}:` read as `except {m.group(2)} as {m.group(3)}:`"
    if "leading zeros" in message and _OCTAL.search(code):
        return _OCTAL.sub(r"0o\1", code) + comment, "octal literal 0NNN read as 0oNNN"
    return None


def as_python3(source: str, filename: str) -> tuple[str, list[str]]:
    """``source`` with its Python 2 forms rewritten, and one note per rewrite.  Raises the compiler's
    SyntaxError for anything else (or the first one when nothing could be rewritten)."""
    notes: list[str] = []
    lines = source.splitlines(keepends=True)
    tabbed_fixed = False
    for _ in range(MAX_REWRITES):
        try:
            compile("".join(lines), filename, "exec", dont_inherit=True)
            return "".join(lines), notes
        except SyntaxError as e:
            message = e.msg or ""
            if isinstance(e, TabError) or "inconsistent use of tabs" in message:
                if tabbed_fixed:
                    raise
                tabbed = [i + 1 for i, ln in enumerate(lines) if ln[:len(ln) - len(ln.lstrip(" \t"))].count("\t")]
                lines = [_expand_indent(ln) for ln in lines]
                tabbed_fixed = True
                shown = ", ".join(map(str, tabbed[:8])) + (", ..." if len(tabbed) > 8 else "")
                notes.append(f"{filename}: lines {shown}: indentation mixing tabs and spaces, read with Python 2's "
                             f"tab stops (every {TAB_STOP} columns)")
                continue
            if not e.lineno or e.lineno > len(lines):
                raise
            line = lines[e.lineno - 1]
            ending = line[len(line.rstrip("\r\n")):]
            fixed = _rewrite(line.rstrip("\r\n"), message)
            if fixed is None:
                raise
            lines[e.lineno - 1] = fixed[0] + ending
            notes.append(f"{filename}:{e.lineno}: Python 2 {fixed[1]}")
    raise SyntaxError(f"more than {MAX_REWRITES} Python 2 forms to rewrite", (filename, 1, 0, ""))
