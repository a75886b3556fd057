"""analysis._pelt stays bit-exact when the compiler may use FMA.

GCC fuses a*b+c into one FMA by default wherever the target has one, which
rounds R's separately rounded products once instead of twice (two of R's
golden series then come out differently). setup.py builds _pelt's C sources with
-ffp-contract=off; this test builds it with setup.py's own flags for an FMA
target (x86-64-v3) and checks R's golden outputs, so dropping the flag fails
here rather than on somebody's aarch64 machine.
"""

import ast
import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from shared_paths import GOLDEN, REPO


def pelt_extension_arg(name: str) -> list[str]:
    """A keyword argument (sources, extra_compile_args) of the analysis._pelt
    Extension in setup.py."""
    for node in ast.walk(ast.parse((REPO / "setup.py").read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Extension" \
                and node.args and ast.literal_eval(node.args[0]) == "analysis._pelt":
            for kw in node.keywords:
                if kw.arg == name:
                    return ast.literal_eval(kw.value)
    raise AssertionError(f"setup.py has no analysis._pelt Extension with {name}")


def pelt_compile_args() -> list[str]:
    return pelt_extension_arg("extra_compile_args")


def fma_cpu() -> bool:
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return " fma " in flags and " avx2 " in flags


@pytest.mark.skipif(sys.platform != "linux" or not fma_cpu(),
                    reason="needs Linux on a CPU with FMA and AVX2 to run an x86-64-v3 build")
def test_fma_target_build_matches_r_bit_for_bit(tmp_path):
    so = tmp_path / "_pelt_v3.so"
    cmd = ["gcc", *pelt_compile_args(), "-march=x86-64-v3", "-shared", "-fPIC",
           f"-I{sysconfig.get_paths()['include']}", *(str(REPO / src) for src in pelt_extension_arg("sources")),
           "-o", str(so), "-lm"]
    subprocess.run(cmd, check=True, capture_output=True)
    # Loaded in a child so this build never replaces the session's module.
    code = (
        "import importlib.machinery as m, importlib.util as u, json, sys, numpy as np\n"
        f"loader = m.ExtensionFileLoader('_pelt', {str(so)!r})\n"
        f"spec = u.spec_from_file_location('_pelt', {str(so)!r}, loader=loader)\n"
        "mod = u.module_from_spec(spec); loader.exec_module(mod)\n"
        f"cases = json.load(open({str(GOLDEN / 'changepoint' / 'cpt_meanvar_pelt.json')!r}))['cases']\n"
        "bad = []\n"
        "for c in cases:\n"
        "    x, e = np.asarray(c['x'], dtype=np.float64), c['expected']\n"
        "    want = (e['cpts'], e['means'], e['variances'])\n"
        "    for ref in (False, True):\n"
        "        if mod.cpt_meanvar(x, e['penalty'], 2, reference=ref) != want:\n"
        "            bad.append((c['name'], ref))\n"
        "print(json.dumps([len(cases), bad]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    count, bad = json.loads(out.stdout)
    assert count == 107
    assert bad == []
