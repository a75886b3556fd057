"""[stop]: the run length driven by a target interval (Pilot's stopping rule, WPS)."""
