import shutil
from pathlib import Path

import pytest

from platform_helpers import ROOTS


@pytest.fixture
def machine(tmp_path):
    """machine("amd-server") -> Path of a private copy of that tree."""
    def copy(shape: str) -> Path:
        dst = tmp_path / shape
        n = 1
        while dst.exists():
            n += 1
            dst = tmp_path / f"{shape}-{n}"
        shutil.copytree(ROOTS / shape, dst, symlinks=True)
        return dst
    return copy


