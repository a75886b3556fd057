"""The base of every table of the experiment file (the model's and each kind's)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictTable(BaseModel):
    # An unknown field is a mistyped one; nan/inf are valid TOML floats but no valid tolerance, duration or count.
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
