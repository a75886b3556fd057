"""The README's OpenBSD route covers what `pip install coldrun[stop|screening]` asks for there.

Every requirement pip resolves on OpenBSD (markers evaluated for it) must either come from an
OpenBSD package the README's pkg_add lines install (it has compiled parts with no OpenBSD wheel:
pydantic-core needs Rust, numpy/scipy Fortran and BLAS; OpenBSD's ports: devel/py-pydantic,
devel/py-pydantic-core, sysutils/py-psutil, math/py-numpy, math/py-scipy) or be pure Python (a
wheel pip installs anywhere).  A new dependency fails here until someone decides which.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[2]
FROM_PACKAGES = {"psutil": "py3-psutil", "pydantic": "py3-pydantic", "numpy": "py3-numpy", "scipy": "py3-scipy",
                 "structlog": "py3-structlog"}
PURE_PYTHON = {"py-cpuinfo", "pydoe3"}
OPENBSD = {"platform_system": "OpenBSD", "sys_platform": "openbsd7", "os_name": "posix", "extra": ""}


def openbsd_requirements(extra: str | None) -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    lines = project["dependencies"] + (project["optional-dependencies"][extra] if extra else [])
    reqs = [Requirement(line) for line in lines]
    return {r.name.lower() for r in reqs if r.marker is None or r.marker.evaluate(OPENBSD)}


def readme_pkg_add() -> set[str]:
    return {word for line in re.findall(r"^\s*pkg_add (.*?)(?:#|$)", (REPO / "README.md").read_text(), re.M)
            for word in line.split()}


@pytest.mark.parametrize("extra", [None, "stop", "screening"])
def test_every_requirement_is_packaged_or_pure_python(extra):
    unknown = openbsd_requirements(extra) - set(FROM_PACKAGES) - PURE_PYTHON
    assert unknown == set(), f"decide how OpenBSD gets {unknown} (a package in the README, or pure Python)"


def test_the_readme_installs_every_packaged_one():
    needed = {FROM_PACKAGES[n] for n in openbsd_requirements("screening") if n in FROM_PACKAGES}
    assert needed - readme_pkg_add() == set()


def test_rust_and_fortran_builds_stay_out_of_the_openbsd_analysis_extra():
    assert {"orjson", "indexed-bzip2"}.isdisjoint(openbsd_requirements("analysis"))
