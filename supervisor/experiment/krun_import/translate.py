"""A run Krun config's names -> the text of an equivalent coldrun experiment file.

Settings follow ../shared/reference/krun.md §2 (Krun's Config defaults).  Each
value's comment names the Krun setting it came from.  What has no coldrun
equivalent is a *note*: listed in a comment block at the top of the file and
returned, so the command prints it too; nothing is dropped silently.  A value
coldrun cannot accept (or that Krun itself refused) is a *problem*: one line
each, and no file is written.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contracts.keys import Key
from supervisor.errors import ColdrunError
from supervisor.experiment import toml_text
from supervisor.experiment.krun_import import stand_ins as k
from supervisor.experiment.krun_import.run_config import ConfigRun
from supervisor.experiment.krun_import.vm_defs import Paths, translate_vm
from supervisor.experiment.model import EXPERIMENT_DIR_VAR, NAME_PATTERN, PLACEHOLDER_DIR, parse_experiment
from supervisor.experiment.toml_text import Table

REQUIRED = ("VMS", "VARIANTS", "BENCHMARKS", "HEAP_LIMIT", "STACK_LIMIT")
KRUN_SETTINGS = frozenset({
    "VMS", "VARIANTS", "BENCHMARKS", "ITERATIONS_ALL_VMS", "N_EXECUTIONS", "SKIP", "HEAP_LIMIT", "STACK_LIMIT",
    "MAIL_TO", "MAX_MAILS", "TEMP_READ_PAUSE", "ENABLE_PINNING", "AMPERF_RATIO_BOUNDS", "AMPERF_BUSY_THRESHOLD",
    "PRE_EXECUTION_CMDS", "POST_EXECUTION_CMDS", "EXECUTION_TIMEOUT", "custom_dmesg_whitelist", "SMTP_HOST"})
VM_KEYS = ("vm_def", "variants", "n_iterations")
# krun/platform.py's default Linux dmesg whitelist (krun.md §5.1), what custom_dmesg_whitelist receives.
KRUN_DMESG_WHITELIST = (
    r"^.*ADDRCONF\(NETDEV_UP\)", r"^.*ADDRCONF\(NETDEV_CHANGE\)", r"^.*NIC Link is (Up|Down)",
    r"^.*irq.* for MSI/MSI-X", r"^.*eth[0-9]: link (down|up)", r"^.*eth[0-9]: Link is (up|down)",
    r"^.*eth[0-9]: Flow control is (on|off)", r"^.*eth[0-9]: EEE is (enabled|disabled)",
    r"^.*\[drm\] Enabling RC6 states")
# Environment Krun gave POST_EXECUTION_CMDS, and what coldrun's post-execution commands get instead.
KRUN_HOOK_ENV = ("KRUN_RESULTS_FILE", "KRUN_LOG_FILE", "KRUN_ETA_DATUM", "KRUN_ETA_VALUE", "KRUN_MANIFEST_FILE")
COLDRUN_HOOK_ENV = "COLDRUN_STATE_DIR, COLDRUN_LOG_FILE, COLDRUN_JOB_KEY, COLDRUN_JOB_STATE"
# TOML field -> the Krun setting, to name it when coldrun refuses a translated value.
KRUN_NAME_OF_FIELD = {
    "heap_limit": "HEAP_LIMIT", "stack_limit": "STACK_LIMIT", "execution_timeout": "EXECUTION_TIMEOUT",
    "executions": "N_EXECUTIONS", "skip": "SKIP", "benchmarks": "BENCHMARKS", "variants": "VARIANTS",
    "mail": "MAIL_TO/MAX_MAILS", "waits.baseline_pause": "TEMP_READ_PAUSE", "vms": "VMS",
    "platform.amperf": "AMPERF_RATIO_BOUNDS/AMPERF_BUSY_THRESHOLD", "platform.kernel_log_allow":
    "custom_dmesg_whitelist", "pre_execution": "PRE_EXECUTION_CMDS", "post_execution": "POST_EXECUTION_CMDS"}


@dataclass
class Translation:
    text: str               # the experiment file
    notes: list[str]        # what has no coldrun equivalent (also in the file's comments)
    vms: int
    keys: int
    set_here: list[str]     # values to set on the benchmark machine (placeholders), also in the file
    warnings: list[str]     # what the file runs that the user should know before `coldrun check`
    python2: list[str]      # Python 2 forms read as Python 2 did (also in the file)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _strings(v: Any) -> bool:
    """A list (or tuple) of strings, as Krun's list settings are."""
    return isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v)


def _kib(n: int) -> str:
    """Krun's KiB as coldrun's size text, in the largest unit that keeps it exact."""
    for unit, factor in (("GiB", 1 << 20), ("MiB", 1 << 10)):
        if n and n % factor == 0:
            return f"{n // factor}{unit}"
    return f"{n}KiB"


def _name(kind: str, name: Any, problems: list[str]) -> bool:
    if isinstance(name, str) and re.fullmatch(NAME_PATTERN, name):
        return True
    problems.append(f"{kind} name {name!r}: coldrun names use only letters, digits and _ . + -; rename it in "
                    f"the config")
    return False


def _literal_skip_part(part: str) -> str:
    """Krun matched a SKIP part literally unless it was exactly "*"; coldrun's fnmatch must too."""
    return part if part == "*" else re.sub(r"([*?\[])", r"[\1]", part)


class _Translator:
    def __init__(self, run: ConfigRun, config: Path, output: Path):
        self.run, self.ns, self.config, self.output = run, run.namespace, config, output
        self.paths = Paths(config.parent.resolve(), output.parent.resolve())
        self.startup_patch = next((p for p in run.lookups.patches() if p.endswith(".bench_cmdline_adjust")), "")
        self.startup_vms: list[str] = []
        self.problems: list[str] = []
        self.notes: list[str] = []
        self.warnings: list[str] = []
        self.top = Table(())
        self.tables: list[Table] = [self.top]

    def get(self, name: str, default: Any = None) -> Any:
        return self.ns.get(name, default)

    def table(self, *path: str, notes: list[str] | None = None) -> Table:
        t = Table(tuple(path), notes=notes or [])
        self.tables.append(t)
        return t

    # -- the parts -----------------------------------------------------------------------------------

    def required(self) -> bool:
        missing = [n for n in REQUIRED if n not in self.ns]
        for n in missing:
            self.problems.append(f"{n} is not defined; Krun requires it" + (" (in KiB)" if "LIMIT" in n else ""))
        for n in ("VMS", "VARIANTS", "BENCHMARKS"):
            if n in self.ns and not isinstance(self.ns[n], dict):
                self.problems.append(f"{n} is a {type(self.ns[n]).__name__}, not a dict")
        return not self.problems

    def experiment(self) -> None:
        t = self.top
        stem = re.sub(r"[^A-Za-z0-9_.+-]", "_", self.config.stem) or "krun"
        t.add("name", stem, f"from {self.config.name}")
        n = self.get("N_EXECUTIONS", 1)
        if not _is_int(n):
            self.problems.append(f"N_EXECUTIONS is {n!r}, not an integer")
        t.add("executions", n, "N_EXECUTIONS" if "N_EXECUTIONS" in self.ns else "Krun's default N_EXECUTIONS")
        t.add("order", "round-robin", "Krun's loop, in this file's order (see the order note above)")
        bench_dir = str(self.config.parent.resolve() / "benchmarks")
        t.add("benchmarks_dir", self.paths.executable(bench_dir).removeprefix(f".{os.sep}"),
              "Krun: <experiment dir>/benchmarks")
        for setting, field in (("HEAP_LIMIT", "heap_limit"), ("STACK_LIMIT", "stack_limit")):
            v = self.ns[setting]
            if _is_int(v) and v > 0:
                t.add(field, _kib(v), f"{setting} = {v} (KiB; ulimit -{'d' if 'HEAP' in setting else 's'})")
            else:
                self.problems.append(f"{setting} is {v!r}; Krun wants a positive number of KiB")
        timeout = self.get("EXECUTION_TIMEOUT")
        if timeout is not None:
            if _is_number(timeout) and timeout > 0:
                t.add("execution_timeout", timeout, "EXECUTION_TIMEOUT (seconds)")
            else:
                self.problems.append(f"EXECUTION_TIMEOUT is {timeout!r}; give seconds or None")
        self.skip()
        for setting, field in (("PRE_EXECUTION_CMDS", "pre_execution"), ("POST_EXECUTION_CMDS", "post_execution")):
            self.commands(setting, field)

    def skip(self) -> None:
        patterns = self.get("SKIP", [])
        if not _strings(patterns):
            self.problems.append(f"SKIP is {patterns!r}, not a list of \"bench:vm:variant\" strings")
            return
        out = []
        for p in patterns:
            try:
                parts = Key.parse(p)
            except ValueError:
                self.problems.append(f"SKIP entry {p!r} is not \"bench:vm:variant\" (Krun asserts three parts)")
                continue
            out.append(str(Key(*(_literal_skip_part(x) for x in parts))))
        if out and self.all_skipped(patterns):
            # Krun ran such a config (its manifest all S); coldrun refuses an experiment that runs nothing.
            self.top.notes.append(f"skip = {toml_text.value(out)}   # SKIP: commented out, it skips every key")
            self.warnings.append("SKIP skips every key, so Krun ran nothing; coldrun refuses an experiment that "
                                 "runs nothing, so the skip list is written commented out: uncomment the "
                                 "patterns you want to keep")
        elif out:
            self.top.add("skip", out, "SKIP")

    def commands(self, setting: str, field: str) -> None:
        cmds = self.get(setting, [])
        if not _strings(cmds):
            self.problems.append(f"{setting} is {cmds!r}, not a list of shell command strings")
            return
        for i, c in enumerate(cmds):
            used = [v for v in KRUN_HOOK_ENV if re.search(rf"\${{?{v}\b", c)]
            if used:
                self.notes.append(f"{setting}[{i}] uses {', '.join('$' + v for v in used)}, which coldrun does "
                                  f"not set (its post-execution commands get {COLDRUN_HOOK_ENV})")
        if cmds:
            self.top.add(field, [{"shell": c} for c in cmds],
                         f"{setting}, run with /bin/sh as Krun did, but by coldrun (root), not the user who "
                         f"started Krun")

    def waits_and_mail(self) -> None:
        if "TEMP_READ_PAUSE" in self.ns:
            pause = self.ns["TEMP_READ_PAUSE"]
            if _is_number(pause) and pause >= 0:
                self.table("waits").add("baseline_pause", pause, "TEMP_READ_PAUSE (seconds)")
            else:
                self.problems.append(f"TEMP_READ_PAUSE is {pause!r}, not a number of seconds")
        to, quota = self.get("MAIL_TO", []), self.get("MAX_MAILS", 5)
        if not isinstance(to, list) or not _strings(to):
            self.problems.append(f"MAIL_TO is {to!r}; Krun requires a list of addresses")
            return
        if not _is_int(quota):
            self.problems.append(f"MAX_MAILS is {quota!r}, not an integer")
            return
        if "MAIL_TO" in self.ns or "MAX_MAILS" in self.ns:
            mail = self.table("mail")
            mail.add("to", to, "MAIL_TO (sent with sendmail -t, as Krun)")
            mail.add("quota", quota, "MAX_MAILS")
        if "SMTP_HOST" in self.ns:
            self.notes.append("SMTP_HOST: Krun never used it (it mailed through sendmail), and neither does coldrun")

    def platform(self) -> None:
        plat = self.table("platform")
        pinning = self.get("ENABLE_PINNING", False)
        if not isinstance(pinning, bool):
            self.problems.append(f"ENABLE_PINNING is {pinning!r}, not True or False")
        else:
            plat.add("pinning", pinning, "ENABLE_PINNING (Krun: a cset shield on CPUs 1..N-1; coldrun: a cgroup "
                                         "v2 cpuset partition on the same CPUs)")
        bounds, busy = self.get("AMPERF_RATIO_BOUNDS"), self.get("AMPERF_BUSY_THRESHOLD")
        if bool(bounds) != bool(busy):
            self.problems.append("AMPERF_RATIO_BOUNDS and AMPERF_BUSY_THRESHOLD must either both be set or "
                                 "neither (Krun refuses this config too)")
        elif not bounds:
            plat.add("amperf", "ignore", "Krun checked A/MPERF only with AMPERF_RATIO_BOUNDS and "
                                         "AMPERF_BUSY_THRESHOLD set; delete this line for coldrun's check")
        elif not (isinstance(bounds, (list, tuple)) and len(bounds) == 2 and all(map(_is_number, bounds))
                  and _is_number(busy) and busy > 0):
            self.problems.append(f"AMPERF_RATIO_BOUNDS {bounds!r} must be (low, high) and AMPERF_BUSY_THRESHOLD "
                                 f"{busy!r} a positive count per second")
        else:
            plat.add("amperf", "check", "AMPERF_RATIO_BOUNDS and AMPERF_BUSY_THRESHOLD are set")
            plat.add("amperf_ratio_bounds", [float(bounds[0]), float(bounds[1])], "AMPERF_RATIO_BOUNDS")
            # coldrun: busy when APERF/s >= busy_fraction x nominal; Krun: when APERF/s > the threshold.
            plat.add("amperf_nominal_hz", float(busy), "AMPERF_BUSY_THRESHOLD (APERF counts/s): with "
                                                       "busy_fraction 1.0 coldrun's busy test is Krun's")
            plat.add("amperf_busy_fraction", 1.0)
        self.dmesg_whitelist(plat)

    def dmesg_whitelist(self, plat: Table) -> None:
        hook = self.get("custom_dmesg_whitelist")
        if hook is None:
            return
        if not callable(hook):
            self.problems.append("custom_dmesg_whitelist is not a function of the default whitelist")
            return
        try:
            result = hook(list(KRUN_DMESG_WHITELIST))
        except Exception as e:      # the config's own code
            self.problems.append(f"custom_dmesg_whitelist(default_whitelist) raised {type(e).__name__}: {e}")
            return
        if not _strings(result):
            self.problems.append("custom_dmesg_whitelist must return a list of regular expressions")
            return
        added = [r for r in result if r not in KRUN_DMESG_WHITELIST]
        removed = [r for r in KRUN_DMESG_WHITELIST if r not in result]
        if added:
            plat.add("kernel_log_allow", added, "custom_dmesg_whitelist's additions to Krun's whitelist (coldrun "
                                                "has its own defaults)")
        if removed:
            self.notes.append(f"custom_dmesg_whitelist removes {len(removed)} of Krun's default patterns; "
                              f"coldrun's own kernel log allow-list cannot be shortened")

    def benchmarks(self) -> None:
        t = self.table("benchmarks", notes=["BENCHMARKS: name -> the param passed to run_iter(param)"])
        for name, param in self.ns["BENCHMARKS"].items():
            if not _name("BENCHMARKS", name, self.problems):
                continue
            if not _is_int(param):
                self.problems.append(f"BENCHMARKS[{name!r}] is {param!r}; run_iter takes an integer param")
                continue
            t.add(name, param)

    def variants(self) -> None:
        for name, ep in self.ns["VARIANTS"].items():
            if not _name("VARIANTS", name, self.problems):
                continue
            if ep is None:      # Krun's ExternalSuiteVMDef: no benchmark file
                self.table("variants", name, notes=[f"VARIANTS[{name!r}] = None (an external suite's variant)"])
                continue
            if not isinstance(ep, k.EntryPoint):
                self.problems.append(f"VARIANTS[{name!r}] is {ep!r}, not EntryPoint(target, subdir=...) or None")
                continue
            t = self.table("variants", name, notes=[f"VARIANTS[{name!r}] = {ep!r}"])
            t.add("target", ep.target)
            if ep.subdir is not None:
                t.add("subdir", ep.subdir)

    def vms(self) -> tuple[int, int]:
        n_vms = n_keys = 0
        for name, spec in self.ns["VMS"].items():
            where = f"VMS[{name!r}]"
            if not _name("VMS", name, self.problems):
                continue
            if not isinstance(spec, dict) or any(key not in spec for key in VM_KEYS):
                self.problems.append(f"{where} must be a dict with 'vm_def', 'variants' and 'n_iterations'")
                continue
            vm_def, variants, iterations = spec["vm_def"], spec["variants"], spec["n_iterations"]
            for extra in sorted(set(spec) - set(VM_KEYS), key=str):
                self.notes.append(f"{where}[{extra!r}]: not a Krun VM setting; ignored by Krun and here")
            if not isinstance(vm_def, k.BaseVMDef):
                self.problems.append(f"{where}['vm_def'] is {vm_def!r}, not a Krun VM definition")
                continue
            if not _strings(variants):
                self.problems.append(f"{where}['variants'] is {variants!r}, not a list of variant names")
                continue
            if not _is_int(iterations):
                self.problems.append(f"{where}['n_iterations'] is {iterations!r}, not an integer")
                continue
            tr = translate_vm(name, vm_def, self.paths, self.problems, self.startup_patch)
            self.notes += tr.notes
            if tr.runner is None:
                continue
            if tr.startup_runner:
                self.startup_env(tr)
            t = self.table("vms", name, notes=[f"{where}: {vm_def!r}"] + tr.remarks)
            t.add("runner", tr.runner)
            if tr.startup_runner:
                self.startup_vms.append(name)
                t.add("mode", "startup", "start-up time (the config's start-up runner and platform patch)")
            for f in ("executable", "args", "env", "instrument"):
                if f in tr.fields:
                    t.add(f, tr.fields[f])
            if tr.startup_runner:
                t.add("iterations", 1, f"n_iterations = {iterations}, which the start-up runners ignored")
            else:
                t.add("iterations", iterations, "n_iterations")
            t.add("variants", variants)
            n_vms += 1
            n_keys += len(variants) * len(self.ns["BENCHMARKS"])
        if not n_vms and not self.problems:
            self.problems.append("no VM of VMS has a coldrun equivalent, so there is nothing to run")
        return n_vms, n_keys

    def startup_env(self, tr: Any) -> None:
        """The paper's start-up runners' directory on a VM's path (Java's CLASSPATH): coldrun's start-up
        runner brings its own, so that part is dropped."""
        dirs = {self.paths.value(os.path.dirname(str(getattr(spec.get("vm_def"), "iterations_runner", ""))))
                for spec in self.ns["VMS"].values() if isinstance(spec, dict)} - {""}
        for var, val in list(tr.fields.get("env", {}).items()):
            kept = [part for part in val.split(os.pathsep) if part not in dirs]
            if len(kept) != len(val.split(os.pathsep)):
                tr.remarks.append(f"{var}: the start-up runners' directory is left out (coldrun's start-up "
                                  f"runner is on its own path)")
                if kept:
                    tr.fields["env"][var] = os.pathsep.join(kept)
                else:
                    del tr.fields["env"][var]
        if "env" in tr.fields and not tr.fields["env"]:
            del tr.fields["env"]

    def all_skipped(self, patterns: list[str]) -> bool:
        """Every key matched by a SKIP pattern (Krun's matcher: a part is "*" or equal)."""
        split = [tuple(Key.parse(p)) for p in patterns]
        vms = self.ns["VMS"] if isinstance(self.ns["VMS"], dict) else {}
        keys = [(b, vm, v) for vm, spec in vms.items() if isinstance(spec, dict)
                for b in self.ns["BENCHMARKS"] for v in (spec.get("variants") or [])]
        return bool(keys) and all(any(all(x in ("*", y) for x, y in zip(p, key)) for p in split) for key in keys)

    def unknown_settings(self) -> None:
        """Krun silently took any name; a near miss of a setting is worth saying."""
        for name in sorted(n for n in self.ns if n.isupper() and n not in KRUN_SETTINGS):
            close = difflib.get_close_matches(name, sorted(KRUN_SETTINGS), n=1, cutoff=0.85)
            if close:
                self.notes.append(f"{name} is not a Krun setting (Krun ignored it); did you mean {close[0]}?")


def _host_values(run: ConfigRun) -> list[tuple[Any, str]]:
    """Values the config took from a table keyed by host name (``BUSY_THRESHOLDS[HOSTNAME]``), each with
    where it came from.  Only top-level dicts are searched: that is how configs write it."""
    if not run.host.read:
        return []
    names = {run.host.name, run.host.name.split(".")[0]}
    found = []
    for var, table in run.namespace.items():
        if isinstance(table, dict) and var.isupper() and names & set(k for k in table if isinstance(k, str)):
            host = next(n for n in table if n in names)
            others = ", ".join(sorted(str(k) for k in table if k != host))
            found.append((table[host], f"{var}[{host!r}] (it also has {others or 'no other host'})"))
    return found


def _same(entry: Any, value: Any) -> bool:
    """A TOML entry carries the config's value (a number possibly as float)."""
    if _is_number(entry) and _is_number(value):
        return float(entry) == float(value)
    return type(entry) is type(value) and entry == value


def _marks(tables: list[Table], run: ConfigRun, out_dir: Path) -> list[str]:
    """Comment every value that depends on where the import ran: placeholders (set on the benchmark
    machine), look-ups this machine answered (check them there), values of a host-keyed table and those
    naming the host.  Returns the placeholders' lines for the header."""
    host_values = _host_values(run)
    placeholders = run.lookups.placeholders
    found = [a for a in run.lookups.answers if not a.placeholder]
    used: set[str] = set()
    for t in tables:
        for e in t.entries:
            text = repr(e.value)
            marks = []
            marks += [f"SET THIS on the benchmark machine: {a.answer} stands for {a.call}"
                      for a in placeholders if a.answer in text]
            used |= {a.answer for a in placeholders if a.answer in text}
            if e.key == "executable" and isinstance(e.value, str) and os.sep in e.value \
                    and PLACEHOLDER_DIR not in e.value and not (out_dir / e.value).exists():
                marks.append("not on this machine: build it here or set this on the benchmark machine")
            marks += [f"{a.call} on the import machine: check it on the benchmark machine"
                      for a in found if a.answer in text]
            marks += [f"host-dependent: {where}" for value, where in host_values if _same(e.value, value)]
            if run.host.read and run.host.name and re.search(rf"\b{re.escape(run.host.name)}\b", text):
                marks.append(f"host-dependent: names the host {run.host.name!r}")
            if marks:
                e.note = "; ".join(([e.note] if e.note else []) + marks)
    return [f"  {a.answer}: {a.call} found nothing on this machine" for a in placeholders if a.answer in used]


def _header(run: ConfigRun, config: Path, notes: list[str], placeholders: list[str], startup_vms: list[str],
            order: str) -> list[str]:
    host = run.host
    lines = [f"coldrun experiment translated from {config.name} by `coldrun import-krun`.",
             "Krun re-ran its config at every boot; this is what the config said when it was imported:",
             "import again after changing the .krun file. Each comment names the Krun setting it comes from.",
             "Paths the config gave relative to its directory (or inside it, via os.getcwd()) are relative to",
             f"this file's directory here (in args and env as {EXPERIMENT_DIR_VAR}); other paths are as given.",
             "Platform controls not set here are coldrun's defaults (the paper's): see `coldrun platform show`."]
    if host.read:
        lines += ["", f"Host: the config read its host name and was evaluated as {host.name!r} "
                      + ("(--hostname)." if host.given else "(this machine; --hostname NAME imports as another)."),
                  "Values that depend on it are marked host-dependent."]
    if run.platform_tests:
        lines += ["", f"OS: the config tests the OS (sys.platform ...); it was evaluated as {sys.platform!r}, so its",
                  "branches for other systems are not here: import it on such a machine for its own file."]
    lines += ["", f"Order: {order}"]
    if placeholders:
        lines += ["", "SET ON THE BENCHMARK MACHINE: these placeholders stand for what Krun looked up and this",
                  "machine does not have (`coldrun check` refuses them until they are set):"] + placeholders
    if startup_vms:
        lines += ["", f"Start-up: the config patched Krun's platform ({run.lookups.patches()[0]}) to run each VM",
                  "under a start-up runner: that is coldrun's mode = \"startup\", set on "
                  + ", ".join(startup_vms) + "."]
    if run.python2:
        lines += ["", "Read as Python 2 (the config is Python 2; coldrun runs it as Python 3):"] + \
                 [f"  - {n}" for n in run.python2]
    if notes:
        lines += ["", "Not carried over (no coldrun equivalent):"] + [f"  - {n}" for n in notes]
    return lines


def _order_note(ns: dict[str, Any]) -> str:
    vms = ", ".join(str(v) for v in ns.get("VMS", {}))
    benches = ", ".join(str(b) for b in ns.get("BENCHMARKS", {}))
    return ("for each execution, every VM, each of its benchmarks and variants (Krun's loop), in this file's "
            f"order: VMs {vms}; benchmarks {benches}. Krun (Python 2.7) took VMS and BENCHMARKS in its dicts' "
            "hash order, not as written, so within a round Krun's order differed; every round holds the same "
            "keys, once each. Reorder [vms] and [benchmarks] to match a Krun run's manifest if it matters.")


def _refused(config: Path, output: Path, e: ColdrunError) -> ColdrunError:
    """coldrun's problems with the translation, each naming the Krun setting behind the field."""
    lines = []
    for line in str(e).splitlines():
        rest = line.removeprefix(f"{output}: ")
        field = rest.split(":", 1)[0]
        krun = next((v for f, v in KRUN_NAME_OF_FIELD.items() if field == f or field.startswith(f + ".")), None)
        lines.append(f"{config}: {krun + ' -> ' if krun else ''}{rest}")
    return ColdrunError("\n".join(lines))


def translate(run: ConfigRun, config: Path, output: Path) -> Translation:
    tr = _Translator(run, config, output)
    if not tr.required():
        raise ColdrunError("\n".join(f"{config}: {p}" for p in tr.problems))
    tr.experiment()
    tr.waits_and_mail()
    tr.platform()
    tr.benchmarks()
    tr.variants()
    n_vms, n_keys = tr.vms()
    tr.unknown_settings()
    if tr.problems:
        raise ColdrunError("\n".join(f"{config}: {p}" for p in dict.fromkeys(tr.problems)))
    placeholders = _marks(tr.tables, run, output.parent.resolve())
    text = toml_text.render(_header(run, config, tr.notes, placeholders, tr.startup_vms, _order_note(tr.ns)),
                            tr.tables)
    try:
        parse_experiment(text.encode(), str(output))
    except ColdrunError as e:
        raise _refused(config, output, e) from None
    return Translation(text, tr.notes, n_vms, n_keys, [p.strip() for p in placeholders], tr.warnings, run.python2)
