"""C parts of coldrun, built with the system compiler.

- libkruntime._kruntime: the Python extension over libkruntime (timing).
- analysis._pelt: R-exact PELT changepoints (long-double running sums).
- analysis._edm: Pilot-exact EDM changepoints (stable-phase detection).
- libkruntime/libkruntime.so: plain shared library for other languages' FFIs.
- iteration_runners/c/iterations_runner: the C iteration runner (libkruntime linked in).
- iteration_runners/probe/bench.so: the C runner's probe benchmark (supervisor/launch/runner_probe.py).

The last three are not Python extensions, so build_ext is extended to link
them next to the extension: in the source tree for `--inplace` (and editable
installs), in build_lib for wheels, so both end up with them.
"""

import os
import shlex
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
LIBKRUNTIME_SOURCES = ["libkruntime/libkruntime.c", "libkruntime/sources.c", "libkruntime/duet.c"]
C_FLAGS = ["-O2", "-Wall", "-Wextra", "-std=gnu11"]

# Native artefacts: (output path relative to the package root, sources, extra cc args).
NATIVE_ARTEFACTS = [
    ("libkruntime/libkruntime.so", LIBKRUNTIME_SOURCES, ["-shared", "-fPIC"]),
    (
        "iteration_runners/c/iterations_runner",
        ["iteration_runners/c/iterations_runner.c", *LIBKRUNTIME_SOURCES],
        ["-Ilibkruntime"] + (["-ldl"] if sys.platform.startswith("linux") else []),
    ),
    ("iteration_runners/probe/bench.so", ["iteration_runners/probe/bench.c"], ["-shared", "-fPIC"]),
]


class build_ext_with_native(build_ext):
    """build_ext, plus libkruntime.so and the C runner linked with the system compiler."""

    def run(self):
        super().run()
        out_root = HERE if self.inplace else Path(self.build_lib)
        cc = shlex.split(os.environ.get("CC", "cc"))
        for rel_out, sources, extra in NATIVE_ARTEFACTS:
            out = out_root / rel_out
            out.parent.mkdir(parents=True, exist_ok=True)
            cmd = [*cc, *C_FLAGS, "-o", str(out), *sources, *extra]
            self.announce(" ".join(cmd), level=2)
            subprocess.run(cmd, cwd=HERE, check=True)

    def get_outputs(self):
        outputs = super().get_outputs()
        if not self.inplace:
            outputs += [str(Path(self.build_lib) / rel) for rel, _, _ in NATIVE_ARTEFACTS]
        return outputs


setup(
    cmdclass={"build_ext": build_ext_with_native},
    ext_modules=[
        Extension(
            "libkruntime._kruntime",
            sources=[*LIBKRUNTIME_SOURCES, "libkruntime/_kruntime.c"],
            include_dirs=["libkruntime"],
            depends=["libkruntime/libkruntime.h", "libkruntime/sources.h", "libkruntime/duet.h"],
            extra_compile_args=["-O2", "-Wall"],
        ),
        Extension(
            "analysis._pelt",
            sources=["analysis/_pelt_src/module.c", "analysis/_pelt_src/changepoints.c",
                     "analysis/_pelt_src/changepoint_kernels.c", "analysis/_pelt_src/bootstrap_kernels.c",
                     "analysis/_pelt_src/outliers.c"],
            # R's arithmetic rounds every product on its own; GCC would fuse
            # a*b+c into one FMA wherever the target has one (aarch64, or
            # x86-64 built for a newer CPU) and change R's last bits.
            extra_compile_args=["-O2", "-Wall", "-ffp-contract=off"],
            depends=["analysis/_pelt_src/pelt.h"],
        ),
        Extension(
            "analysis._edm",
            sources=["analysis/_edm_src/module.c", "analysis/_edm_src/edm_common.c",
                     "analysis/_edm_src/edm_reference.c", "analysis/_edm_src/edm_fast.c"],
            depends=["analysis/_edm_src/edm.h"],
            # Pilot's g++ build rounds every product on its own; see edm_common.c.
            extra_compile_args=["-O2", "-Wall", "-ffp-contract=off"],
        ),
    ],
)
