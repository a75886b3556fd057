"""Runner ``krun-external``: runs a Krun external-suite script (ExternalSuiteVMDef) unmodified.

    python krun_external.py <script> [script args] <benchmark name> <iterations> <param> <debug 0|1>

Krun's protocol for such scripts: the script gets ``<benchmark name>
<iterations> <param> <debug>`` and prints one JSON object with exactly
``wallclock_times``, ``core_cycle_counts``, ``aperf_counts`` and
``mperf_counts`` on stdout.  This adapter takes the results channel (fd 3)
out of the script's reach first, runs the script, and rewrites its object as
a protocol-1 document (PROTOCOL.md): counters are available exactly when the
script reported per-core lists.  The script's stderr is the runner's stderr.

Exit status (PROTOCOL.md): 0 document written; 1 the script failed or printed
something other than Krun's JSON; 2 bad usage, or the script cannot be run;
3 the results channel failed.  Standard library only.
"""

import json
import os
import subprocess
import sys

PROTOCOL_VERSION = 1
KRUN_KEYS = ("wallclock_times", "core_cycle_counts", "aperf_counts", "mperf_counts")
EXIT_FAILED, EXIT_USAGE, EXIT_CHANNEL = 1, 2, 3
USAGE = "usage: krun_external.py <script> [script args] <benchmark> <iterations> <param> <debug 0|1>"


def fail(message, status):
    sys.stderr.write("krun_external.py: error: %s\n" % message)
    sys.exit(status)


def take_channel():
    fd = int(os.environ.get("COLDRUN_RESULTS_FD", "3"))
    try:
        private = os.dup(fd)      # not inheritable: the script never sees it
    except OSError:
        fail("results channel fd %d is not open; the supervisor passes it (see PROTOCOL.md)" % fd, EXIT_USAGE)
    os.close(fd)
    return private


def document(krun):
    """Krun's four keys -> a protocol-1 document (validated again by the supervisor)."""
    if not isinstance(krun, dict) or set(krun) != set(KRUN_KEYS):
        keys = sorted(krun) if isinstance(krun, dict) else type(krun).__name__
        fail("the script's output has %s, not Krun's keys %s" % (keys, list(KRUN_KEYS)), EXIT_FAILED)
    doc = dict(krun, protocol_version=PROTOCOL_VERSION)
    if any(krun[k] for k in KRUN_KEYS[1:]):
        doc["counters"] = {"available": True, "reason": None}
    else:
        doc["counters"] = {"available": False, "reason": "the Krun external suite reported no per-core counters"}
    return doc


def main(argv):
    if len(argv) < 6:
        fail("expected a script and 4 arguments\n" + USAGE, EXIT_USAGE)
    channel = take_channel()
    command = argv[1:]
    try:
        proc = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    except OSError as e:
        fail("cannot run the external suite script %s: %s" % (command[0], e.strerror or e), EXIT_USAGE)
    if proc.returncode != 0:
        fail("the external suite script exited with status %d" % proc.returncode, EXIT_FAILED)
    try:
        krun = json.loads(proc.stdout.decode("utf-8"))
    except ValueError as e:
        fail("the script's stdout is not Krun's JSON (%s); first bytes: %r" % (e, proc.stdout[:80]), EXIT_FAILED)
    try:
        text = json.dumps(document(krun), allow_nan=False)
    except ValueError as e:       # NaN or infinity, which JSON (and the protocol) does not allow
        fail("the script's results are not finite numbers (%s)" % e, EXIT_FAILED)
    try:
        with os.fdopen(channel, "w") as out:
            out.write(text)
    except (OSError, ValueError) as e:
        fail("writing the results document failed: %s" % e, EXIT_CHANNEL)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
