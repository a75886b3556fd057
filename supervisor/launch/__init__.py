"""Launching a runner: its command, the process, and its results document."""
