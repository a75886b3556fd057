"""Platform layer: controls and checks per OS, behind one interface (see base.py)."""
