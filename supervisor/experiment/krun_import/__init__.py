"""`coldrun import-krun`: a Krun ``.krun`` config -> an equivalent coldrun experiment file.

``run_config`` executes the config (it is Python) against stand-ins for Krun's
modules (``stand_ins``), so no Krun install is needed; ``translate`` maps what
it defined onto coldrun's experiment model (``vm_defs`` for the VM
definitions) and writes TOML with comments (``supervisor.experiment.toml_text``).
"""

from __future__ import annotations

from pathlib import Path

from supervisor.experiment.krun_import.run_config import run_config
from supervisor.experiment.krun_import.translate import Translation, translate

__all__ = ["Translation", "import_krun"]


def import_krun(config: Path, output: Path, hostname: str | None = None) -> Translation:
    """Run ``config`` (as host ``hostname``, default this machine) and translate it for an experiment file
    at ``output`` (not written here)."""
    return translate(run_config(config, hostname), config, output)
