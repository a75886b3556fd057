"""The experiment file's [platform] section: which controls to apply and check.

Defaults are the paper's settings for a production run.  The platform
layer reads this; the experiment model embeds it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class PlatformPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    governor: str = "performance"
    turbo: bool = False
    perf_max_sample_rate: int = 1
    aslr: bool = True
