"""Compiling Krun-style Java benchmarks against coldrun's Java runner (`coldrun build-java DIR...`).

A Krun Java benchmark is a class (``KrunEntry`` by convention) implementing
``BaseKrunEntry``, which the runner defines, so javac needs the runner's
classes on its class path.  ``build_java_benchmarks`` compiles every ``.java``
file of each directory in place (the class files go beside the sources, where
Krun's layout and coldrun's runner look for them) with the runner's class
directory and the benchmark directory on the class path.  ``runner_classpath``
is that class directory, for Makefiles:
``javac -cp "$(coldrun build-java --classpath):." *.java``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from iteration_runners.languages import RunnerBuildError, run_build, build_java_classes

BUILD_JAVA_COMMAND = "coldrun build-java"


def runner_classpath() -> Path:
    """The runner's class directory (built first if missing or stale)."""
    return build_java_classes()


@dataclass(frozen=True)
class JavaBuild:
    directory: Path
    status: str        # "built", "up to date" or "failed"
    sources: int
    output: str = ""   # failed: javac's whole error block (or why nothing was compiled)

    @property
    def ok(self) -> bool:
        return self.status != "failed"

    def line(self) -> str:
        return f"{self.directory}: {self.status} ({self.sources} .java file{'s' if self.sources != 1 else ''})"


def _stale(source: Path) -> bool:
    built = source.with_suffix(".class")
    return not built.is_file() or built.stat().st_mtime < source.stat().st_mtime


def build_java_benchmarks(directories: list[Path]) -> list[JavaBuild]:
    """javac every .java file in each directory whose class is missing or older; every directory is tried,
    a failure is one JavaBuild with javac's output (RunnerBuildError only when the runner's own classes
    cannot be built, which every directory needs)."""
    builds = []
    for d in directories:
        sources = sorted(d.glob("*.java")) if d.is_dir() else []
        if not d.is_dir():
            builds.append(JavaBuild(d, "failed", 0, f"{d} is not a directory of Java benchmark sources"))
        elif not sources:
            builds.append(JavaBuild(d, "failed", 0, f"{d} has no .java files to compile"))
        elif not any(_stale(s) for s in sources):
            builds.append(JavaBuild(d, "up to date", len(sources)))
        else:
            builds.append(_javac(d, sources, runner_classpath()))
    return builds


def _javac(d: Path, sources: list[Path], runner_classes: Path) -> JavaBuild:
    classpath = f"{runner_classes}{os.pathsep}{d}"
    try:
        # No --release: the classes target this JDK, the one the experiment's java normally is.
        run_build(["javac", "-nowarn", "-cp", classpath, "-d", str(d), *map(str, sources)],
                  f"the Java benchmark in {d}")
    except RunnerBuildError as e:
        return JavaBuild(d, "failed", len(sources), e.output or str(e))
    for c in d.glob("*.class"):     # the benchmark user only reads them
        c.chmod(c.stat().st_mode | 0o044)
    return JavaBuild(d, "built", len(sources))
