"""A suite of broken benchmarks in every language, as users write them (issue 25), and the experiment that
runs them: what `coldrun check` must find by loading and what only its rehearsal finds.

``BROKEN`` maps each benchmark to (language, source, where it is caught, words of the language's own
error that the problem line must carry).  ``write_suite`` writes the sources, compiles the C and Java
ones, and writes an experiment with one VM per language whose interpreter is installed.
"""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

LOAD, REHEARSAL = "load", "rehearsal"


@dataclass(frozen=True)
class Broken:
    lang: str
    source: str
    caught_by: str       # LOAD (check's load) or REHEARSAL (only running an iteration finds it)
    says: str            # the language's own words the line must include
    fix: str = ""        # and coldrun's words naming the fix, for a Krun-era suite's known quirk (issue 29)


BROKEN: dict[str, Broken] = {
    # Python: a SyntaxError, a misspelt entry point, an error in the first iteration
    "py_syntax": Broken("python", "def run_iter(n):\n    return (n +\n", LOAD, "SyntaxError"),
    "py_misspelt": Broken("python", "def run_itr(n):\n    return n\n", LOAD, "has no run_iter"),
    "py_first_iter": Broken("python", "def run_iter(n):\n    return n / 0\n", REHEARSAL,
                            "ZeroDivisionError: division by zero"),
    "pypy_syntax": Broken("pypy", "def run_iter(n)\n    return n\n", LOAD, "SyntaxError"),
    # C: libm dropped by --as-needed, a gnu89-style inline that C99 never emits, a crash
    "c_pow": Broken("c", "#include <math.h>\nvolatile double x = 2.0, sink;\n"
                         "void run_iter(int n) { sink = pow(x, n); }\n", LOAD, "undefined symbol: pow",
                    "pow is libm's: link the benchmark with -lm after its sources"),
    "c_inline": Broken("c", "inline int rnd(int n) { return n * 7; }\nvolatile int sink;\n"
                            "void run_iter(int n) { sink = rnd(n); }\n", LOAD, "undefined symbol: rnd",
                       "if rnd is an inline function of the benchmark, build it with -fgnu89-inline"),
    "c_crash": Broken("c", "#include <stdlib.h>\nvoid run_iter(int n) { if (n) abort(); }\n", REHEARSAL,
                      "SIGABRT"),
    # LuaJIT: a syntax error; Lua 5.2's table.unpack at the first iteration
    "lua_syntax": Broken("lua", "function run_iter(n)\n  return n +\n", LOAD, "unexpected symbol"),
    "lua_unpack": Broken("lua", "function run_iter(n)\n  return table.unpack({n})\nend\n", REHEARSAL,
                         "attempt to call field 'unpack' (a nil value)",
                         "table.unpack is Lua 5.2's: this LuaJIT was built without LUAJIT_ENABLE_LUA52COMPAT"),
    # Node.js
    "js_syntax": Broken("javascript", "function run_iter(n) {\n  return n +;\n}\n", LOAD,
                        "SyntaxError: Unexpected token"),
    "js_first_iter": Broken("javascript", "function run_iter(n) {\n  return n.nope();\n}\n", REHEARSAL,
                            "TypeError: n.nope is not a function"),
    # Java: a static initialiser that throws (ExceptionInInitializerError and its cause), a run_iter that throws
    "java_init": Broken("java", "class KrunEntry implements BaseKrunEntry {\n"
                                "  static int[] table = new int[-1];\n"
                                "  public void run_iter(int n) { }\n}\n", LOAD,
                        "caused by java.lang.NegativeArraySizeException"),
    "java_first_iter": Broken("java", "class KrunEntry implements BaseKrunEntry {\n"
                                      "  public void run_iter(int n) {\n"
                                      "    throw new IllegalStateException(\"no table\", "
                                      "new ArithmeticException(\"root\"));\n  }\n}\n", REHEARSAL,
                              "caused by java.lang.ArithmeticException: root"),
    # Ruby
    "rb_syntax": Broken("ruby", "def run_iter(n)\n  n +\n", LOAD, "SyntaxError"),
    "rb_first_iter": Broken("ruby", "def run_iter(n)\n  n.nope\nend\n", REHEARSAL, "NoMethodError"),
    # PHP: short tags off in Debian's php-cli, a parse error, an error in the first iteration
    "php_short_tag": Broken("php", "<?\nfunction run_iter($n) { return $n; }\n", LOAD, "short_open_tag is off",
                              'add "-d", "short_open_tag=1" to the VM\'s args'),
    "php_parse": Broken("php", "<?php\nfunction run_iter($n) { return $n +; }\n", LOAD, "ParseError"),
    "php_first_iter": Broken("php", "<?php\nfunction run_iter($n) { return no_such_function($n); }\n",
                             REHEARSAL, "Call to undefined function no_such_function()"),
}

# runner, executable, benchmark file, Debian package of the interpreter
LANGS = {
    "python": ("python", "python3", "bench.py", "python3"),
    "pypy": ("pypy", "pypy3", "bench.py", "pypy3"),
    "c": ("c", None, "bench.so", "gcc"),
    "lua": ("lua", "luajit", "bench.lua", "luajit"),
    "javascript": ("javascript", "node", "bench.js", "nodejs"),
    "java": ("java", "java", "KrunEntry.class", "openjdk-17-jdk-headless"),
    "ruby": ("ruby", "ruby", "bench.rb", "ruby"),
    "php": ("php", "php", "bench.php", "php-cli"),
}
GOOD = {
    "python": "def run_iter(n):\n    return sum(range(n))\n",
    "lua": "function run_iter(n)\n  local s = 0\n  for i = 1, n do s = s + i end\n  return s\nend\n",
}


def missing_tools() -> dict[str, str]:
    """Language -> the apt-get line for its missing tool."""
    tools = {"c": "cc", "java": "javac"}
    out = {}
    for lang, (_, exe, _, package) in LANGS.items():
        tool = tools.get(lang, exe)
        if shutil.which(tool) is None:
            out[lang] = f"{tool} is not installed (apt-get install {package})"
    return out


def _compile(lang: str, d: Path) -> None:
    if lang == "c":
        # Debian's gcc links with --as-needed; -std=c99 -O0 keeps rnd's C99 inline undefined, as in the issue.
        subprocess.run(["cc", "-std=c99", "-O0", "-shared", "-fPIC", "-Wl,--as-needed", "-o", str(d / "bench.so"),
                        str(d / "bench.c")], check=True, capture_output=True)
    elif lang == "java":
        from iteration_runners.java_benchmarks import build_java_benchmarks
        assert all(b.ok for b in build_java_benchmarks([d]))


def write_suite(root: Path, names: list[str] | None = None, *, benchmark_user: bool = False,
                iterations: int = 3) -> Path:
    """The broken benchmarks ``names`` (default all whose language is installed) plus one good key per
    language used, under ``root``; returns the experiment file."""
    missing = missing_tools()
    names = [n for n in (names or list(BROKEN)) if BROKEN[n].lang not in missing]
    langs = sorted({BROKEN[n].lang for n in names})
    benches: dict[str, int] = {}
    for name in names:
        b = BROKEN[name]
        d = root / "benchmarks" / name / b.lang
        d.mkdir(parents=True)
        source = {"c": "bench.c", "java": "KrunEntry.java"}.get(b.lang, LANGS[b.lang][2])
        (d / source).write_text(b.source)
        _compile(b.lang, d)
        benches[name] = 1
    if "python" in langs or "lua" in langs:
        for lang in ("python", "lua"):
            d = root / "benchmarks" / "good" / lang
            d.mkdir(parents=True)
            (d / LANGS[lang][2]).write_text(GOOD[lang])
        benches["good"] = 100
    vms = []
    for lang in langs:
        runner, exe, target, _ = LANGS[lang]
        vms.append(textwrap.dedent(f"""\
            [variants.{lang}]
            target = "{target}"
            subdir = "{lang}"

            [vms.{lang}]
            runner = "{runner}"
            {f'executable = "{exe}"' if exe else ''}
            iterations = {iterations}
            variants = ["{lang}"]
            """))
    skip = [f"good:{lang}:*" for lang in langs if lang not in ("python", "lua")]
    skip += [f"{name}:{lang}:*" for name in benches if name != "good" for lang in langs if lang != BROKEN[name].lang]
    text = textwrap.dedent(f"""\
        name = "broken"
        executions = 2
        execution_timeout = "2min"
        skip = {skip!r}

        [waits]
        boot_settle = "0s"
        sync = "0s"
        baseline_pause = "0s"

        [platform]
        benchmark_user = {'true' if benchmark_user else 'false'}

        [benchmarks]
        """).replace("'", '"') + "".join(f"{b} = {p}\n" for b, p in benches.items()) + "\n" + "\n".join(vms)
    exp = root / "broken.toml"
    exp.write_text(text)
    return exp
