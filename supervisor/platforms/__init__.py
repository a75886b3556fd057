"""Platform layer: controls and checks per OS, behind one interface (base.py).

The package module imports nothing: factory.py chooses and builds a platform (contract C), so no module
here imports the package back (tests/test_import_rules.py keeps it so).
"""
