"""C parts of coldrun, built with the system compiler.

- libkruntime._kruntime: the Python extension over libkruntime (timing).
- analysis._pelt: R-exact PELT changepoints (long-double running sums).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "libkruntime._kruntime",
            sources=["libkruntime/libkruntime.c", "libkruntime/_kruntime.c"],
            include_dirs=["libkruntime"],
            extra_compile_args=["-O2", "-Wall"],
        ),
        Extension(
            "analysis._pelt",
            sources=["analysis/_pelt.c"],
            extra_compile_args=["-O2", "-Wall"],
        ),
    ],
)
