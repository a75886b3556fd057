"""Process execution: start one runner and wait for it, without a shell.

The child gets its own process group, heap (RLIMIT_DATA) and stack
(RLIMIT_STACK) limits, stdin from /dev/null, stdout/stderr on pipes and the
results channel on file descriptor 3 (contract A).  All other descriptors are
closed.  The supervisor blocks in one selector over the three pipes and a
pidfd (or a SIGCHLD wake-up pipe where pidfd is missing), with the deadline as
the select timeout: no sleep-polling.  Output is drained continuously and only
bounded tails are kept.  The execution ends when the runner exits (or at the
deadline), not at pipe EOF: then every process left in its containment (a
cgroup, or the process group as fallback; see containment.py) is killed and
counted, and the pipes are drained for at most DRAIN_SECONDS.
"""

from __future__ import annotations

import fcntl
import os
import re
import resource
import selectors
import shutil
import signal
import time
from dataclasses import dataclass, field

import psutil

from supervisor.launch.containment import kill_cgroup, open_containment, remove_cgroup
from supervisor.launch.cpuset import PlacementError, PlacementRequest
from supervisor.launch.memory_limit import MemoryBound, MemoryReading

RESULTS_FD = 3
DEFAULT_TAIL_BYTES = 64 * 1024
DEFAULT_RESULTS_LIMIT = 64 * 1024 * 1024
_READ_CHUNK = 256 * 1024
DRAIN_SECONDS = 2.0             # output still buffered after the runner's end is read for at most this long
# Signals that end a boot (boot/interrupts.py): blocked while a runner's leftovers are killed.
STOPPING_SIGNALS = (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
INTERRUPTING_SIGNALS = {signal.SIGTERM, *STOPPING_SIGNALS}
_START_TIME_TOLERANCE = 0.05    # seconds; psutil's create_time is exact to the clock tick for one boot


class Tail:
    """Keeps the last ``limit`` bytes of a stream and counts all of them."""

    def __init__(self, limit: int):
        self.limit = limit
        self.buf = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        self.buf += data
        if len(self.buf) > 2 * self.limit:   # trim in batches: amortised O(1) per byte
            del self.buf[:-self.limit]

    def text(self) -> str:
        data = bytes(self.buf[-self.limit:])
        if self.total > len(data) and b"\n" in data:    # cut: start at a line, not mid-way through one
            data = data[data.index(b"\n") + 1:]
        return data.decode("utf-8", "replace")

    @property
    def truncated(self) -> bool:
        return self.total > self.limit


def last_lines(text: str, limit: int) -> str:
    """The last whole lines of ``text`` within ``limit`` characters (a failing line is near the end);
    a last line longer than ``limit`` alone keeps its end, marked with "...". """
    text = text.rstrip("\n")
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    if "\n" in cut:
        return cut[cut.index("\n") + 1:]
    return "..." + cut[3:]


# "error: ...", "Fatal", "ZeroDivisionError:", "java.lang.RuntimeException" (not "error_handling.py").
_ERROR_WORDS = re.compile(r"(?i:\b(?:error|exception|fatal|panic)\b)|(?:Error|Exception)\b")


# A runner's own last word (PROTOCOL.md): "iterations_runner.lua: error: ...", "libkruntime: ...".
_RUNNER_SAYS = re.compile(r"^(?:(?:iterations_runner(?:\.\w+)?|IterationsRunner): error: |libkruntime: )")


def error_line(text: str, limit: int = 400) -> str | None:
    """The line of a runner's stderr that says what went wrong: the runner's own last line (each ends a
    failure with "<runner>: error: <the language's message>"), else the last one naming an error (an
    external runner, an interpreter that died before the runner ran), else the last."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    said = next((line for line in reversed(lines) if _RUNNER_SAYS.match(line)), None) or next(
        (line for line in reversed(lines) if _ERROR_WORDS.search(line)), lines[-1])
    return said if len(said) <= limit else said[:limit - 3] + "..."


@dataclass
class ProcessResult:
    pid: int
    exit_code: int | None = None        # set when the runner exited normally
    signal: int | None = None           # set when a signal ended it
    timed_out: bool = False
    launch_error: str | None = None     # exec failed (missing executable, ...)
    stdout: Tail = field(default_factory=lambda: Tail(DEFAULT_TAIL_BYTES))
    stderr: Tail = field(default_factory=lambda: Tail(DEFAULT_TAIL_BYTES))
    results: bytes = b""
    results_oversize: bool = False
    results_limit: int = 0              # bytes of the document kept at most (run_process's results_limit)
    results_spilled: str | None = None  # over the limit: the whole document is in this file instead
    started_at: float = 0.0             # wall clock (epoch seconds)
    ended_at: float = 0.0
    duration: float = 0.0               # monotonic seconds
    rusage: dict[str, float] = field(default_factory=dict)
    containment: str = ""               # "cgroup" or "process_group" (supervisor.launch.containment)
    containment_detail: str = ""        # the cgroup's path, or why the fallback was used
    leftover_processes: int = 0         # processes besides the runner still alive at its end, then killed
    containment_problem: str | None = None   # the cgroup could not be removed (why)
    memory: MemoryReading | None = None      # the run's memory cgroup: its limit and what the kernel counted


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _high_dup(fd: int) -> int:
    return fcntl.fcntl(fd, fcntl.F_DUPFD, 10)


def _set_limit(name: str, limit: int, value: int) -> None:
    """Soft and hard exactly ``value``, whatever was inherited: started from OpenBSD's rc, coldrun has the
    daemon login class's limits (login.conf), which may be lower; root may raise a hard limit."""
    try:
        resource.setrlimit(limit, (value, value))
    except (ValueError, OSError):
        hard = resource.getrlimit(limit)[1]
        raise OSError(f"cannot set {name} to {value} bytes: the inherited hard limit is {hard} and only root "
                      "(Linux: CAP_SYS_RESOURCE) may raise it; run coldrun as root, or lower the experiment's "
                      "limit") from None


def _child(argv: list[str], env: dict[str, str], cwd: str, heap: int | None, stack: int | None,
           fds: tuple[int, int, int, int], err_w: int, enter, cpu: int | None) -> None:
    """Runs in the forked child; never returns."""
    try:
        os.setpgid(0, 0)
        enter()    # into the execution's cgroup, before anything can fork
        if cpu is not None:    # a pair's side: its own CPU, inherited by everything it starts
            os.sched_setaffinity(0, {cpu})
        for name, limit, value in (("RLIMIT_DATA", resource.RLIMIT_DATA, heap),
                                   ("RLIMIT_STACK", resource.RLIMIT_STACK, stack)):
            if value is not None:
                _set_limit(name, limit, value)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        # Move everything out of the way before placing 0..3.
        devnull, out_w, errs_w, res_w = (_high_dup(fd) for fd in fds)
        err_hi = fcntl.fcntl(err_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(errs_w, 2)
        os.dup2(res_w, RESULTS_FD)
        os.closerange(RESULTS_FD + 1, err_hi)
        os.closerange(err_hi + 1, os.sysconf("SC_OPEN_MAX"))
        os.chdir(cwd)
        os.execve(argv[0], argv, env)
    except BaseException as e:  # report through the CLOEXEC pipe, then die
        try:
            os.write(err_hi if "err_hi" in locals() else err_w,
                     f"{type(e).__name__}: {e}".encode()[:2000])
        finally:
            os._exit(127)


class _ExitWatcher:
    """A readable descriptor that fires when the child exits: pidfd, else SIGCHLD wake-up pipe."""

    def __init__(self, pid: int):
        self.pid = pid
        self._old_handler = None
        self._old_wakeup: int | None = None
        try:
            self.fd = os.pidfd_open(pid)
            self._pipe = None
        except (AttributeError, OSError):
            r, w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
            self._pipe = (r, w)
            self.fd = r
            self._old_handler = signal.signal(signal.SIGCHLD, lambda *_: None)
            self._old_wakeup = signal.set_wakeup_fd(w)

    def drain(self) -> None:
        if self._pipe:
            try:
                while os.read(self.fd, 512):
                    pass
            except BlockingIOError:
                pass

    def close(self) -> None:
        if self._pipe:
            assert self._old_wakeup is not None     # set with the pipe
            signal.set_wakeup_fd(self._old_wakeup)
            signal.signal(signal.SIGCHLD, self._old_handler)
            os.close(self._pipe[0])
            os.close(self._pipe[1])
        else:
            os.close(self.fd)


class _Pump:
    """Reads stdout, stderr and the results channel as they become readable, keeping bounded tails."""

    def __init__(self, sel: selectors.BaseSelector, result: ProcessResult, out_r: int, err_r: int, res_r: int,
                 results_limit: int, spill: str | None = None):
        self.sel, self.result, self.res_r, self.limit, self.spill = sel, result, res_r, results_limit, spill
        self.spill_fd: int | None = None
        self.streams = {out_r: result.stdout, err_r: result.stderr, res_r: None}
        self.results = bytearray()
        for fd in self.streams:
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ)

    def read(self, fd: int) -> None:
        try:
            data = os.read(fd, _READ_CHUNK)
        except BlockingIOError:
            return
        if not data:
            self._close(fd)
        elif fd == self.res_r:
            if self.spill_fd is not None:
                _write_all(self.spill_fd, data)
            elif len(self.results) + len(data) > self.limit:
                self.result.results_oversize = True
                self._spill(data)
            else:
                self.results += data
        else:
            tail = self.streams[fd]
            assert tail is not None     # only res_r's entry is None, and it is read above
            tail.add(data)

    def _spill(self, data: bytes) -> None:
        """Over the limit: what was measured goes to the spill file, whole, rather than being dropped."""
        if self.spill is None or self.result.results_spilled is not None:
            return
        try:
            self.spill_fd = os.open(self.spill, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            _write_all(self.spill_fd, bytes(self.results))
            _write_all(self.spill_fd, data)
        except OSError:       # no room: the refusal stands, without the copy
            self._close_spill()
            return
        self.results = bytearray()
        self.result.results_spilled = self.spill

    def _close_spill(self) -> None:
        if self.spill_fd is not None:
            try:
                os.fsync(self.spill_fd)
            except OSError:
                pass
            os.close(self.spill_fd)
            self.spill_fd = None

    def drain(self, seconds: float) -> None:
        """Read to EOF, for at most ``seconds``: a process we could not kill may hold the pipes open."""
        deadline = time.monotonic() + seconds
        while self.streams:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            for key, _ in self.sel.select(remaining):
                if key.fd in self.streams:
                    self.read(key.fd)

    def _close(self, fd: int) -> None:
        self.sel.unregister(fd)
        os.close(fd)
        del self.streams[fd]

    def close(self) -> None:
        for fd in list(self.streams):
            self._close(fd)
        self._close_spill()


def _create_time(pid: int) -> float | None:
    try:
        return psutil.Process(pid).create_time()   # the runner is our unreaped child: still readable
    except psutil.Error:
        return None


def run_process(argv: list[str], env: dict[str, str], *, cwd: str, heap_limit: int | None,
                stack_limit: int | None, timeout: float | None,
                tail_bytes: int = DEFAULT_TAIL_BYTES, results_limit: int = DEFAULT_RESULTS_LIMIT,
                on_started=None, cgroup_parent: str | None = None,
                drain_seconds: float = DRAIN_SECONDS, placement: PlacementRequest | None = None,
                memory_limit: int | None = None, results_spill: str | None = None) -> ProcessResult:
    """Run ``argv`` until it exits (or times out), kill what it left, and return what it did.

    ``on_started(pid, create_time, cgroup)`` is called once the exec succeeded;
    ``cgroup_parent`` is where the per-execution cgroup goes (default: the cgroup v2 root);
    ``placement`` pins the runner to its CPU: its execution cgroup's cpuset where it has one (verified
    before the fork; its ``on_placed`` hears how), and sched_setaffinity before exec in any case.  A cpuset the
    kernel does not honour is a launch error: nothing is started.  ``memory_limit``: bytes all the run's
    processes may use together, swap off (memory_limit.py: a cgroup's, where one has the memory controller).
    ``results_spill``: a file (made new) that takes the whole document once it is over ``results_limit``.
    Two calls may run at once in threads (a pair execution): each waits on its own pidfd.
    """
    if "/" not in argv[0]:   # execve needs a path; look names up on the child's PATH, here in the parent
        found = shutil.which(argv[0], path=env.get("PATH", ""))
        if found:
            argv = [found, *argv[1:]]
    box, how = open_containment(cgroup_parent)
    cpu = placement.cpu if placement is not None else None
    if placement is not None:
        try:
            placed = box.place(placement.cpu)
        except PlacementError as e:
            problem = box.close()
            return ProcessResult(pid=0, launch_error=f"cpuset placement: {e}", containment=box.kind,
                                 containment_detail=how, containment_problem=problem)
        if placement.on_placed is not None:
            placement.on_placed(placed)
    memory = MemoryBound(memory_limit, box.cgroup)

    def enter() -> None:
        box.enter()
        memory.enter()

    out_r, out_w = os.pipe2(os.O_CLOEXEC)
    err_r, err_w = os.pipe2(os.O_CLOEXEC)
    res_r, res_w = os.pipe2(os.O_CLOEXEC)
    exec_r, exec_w = os.pipe2(os.O_CLOEXEC)
    devnull = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    started_at = time.time()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(argv, env, cwd, heap_limit, stack_limit, (devnull, out_w, err_w, res_w), exec_w, enter, cpu)
    box.runner_started(pid)
    try:
        os.setpgid(pid, pid)   # also in the parent: no race with killpg below
    except (PermissionError, ProcessLookupError):
        pass
    for fd in (out_w, err_w, res_w, exec_w, devnull):
        os.close(fd)
    result = ProcessResult(pid=pid, stdout=Tail(tail_bytes), stderr=Tail(tail_bytes), started_at=started_at,
                           containment=box.kind, containment_detail=how, results_limit=results_limit)
    sel = selectors.DefaultSelector()
    pump = _Pump(sel, result, out_r, err_r, res_r, results_limit, results_spill)
    watcher = None
    status: tuple[int, resource.struct_rusage | None] | None = None
    on_ended = placement.on_ended if placement is not None else None
    wants_end = on_ended is not None
    at_end = None
    try:
        exec_error = b""
        while True:   # the exec pipe closes on successful exec, or carries the error
            chunk = os.read(exec_r, 4096)
            if not chunk:
                break
            exec_error += chunk
        os.close(exec_r)
        if exec_error:
            result.launch_error = exec_error.decode("utf-8", "replace")
        elif on_started is not None:
            on_started(pid, _create_time(pid), box.cgroup)

        # The execution ends when the runner exits, not when its pipes close: a daemon it
        # left behind may hold them open for ever.
        deadline = None if timeout is None else t0 + timeout
        watcher = _ExitWatcher(pid)
        sel.register(watcher.fd, selectors.EVENT_READ)
        while status is None:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                result.timed_out = True
                break
            for key, _ in sel.select(remaining):
                if key.fd != watcher.fd:
                    pump.read(key.fd)
                    continue
                watcher.drain()
                # Read before reaping: an exited, unreaped runner still answers sched_getaffinity.
                seen = box.placement_at_end(pid) if wants_end else None
                got_pid, st, ru = os.wait4(pid, os.WNOHANG)
                if got_pid == pid:
                    status = (st, ru)
                    at_end = seen
        result.duration = time.monotonic() - t0
        result.ended_at = time.time()
    finally:
        # Completed, failed, timed out or interrupted (SIGTERM, SIGHUP, ...): nothing the runner started survives
        # it.  A second signal waits until this bounded clean-up is done.
        masked = signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTING_SIGNALS)
        try:
            if wants_end and at_end is None and status is None:    # timed out or interrupted: it is alive
                at_end = box.placement_at_end(pid)
            if at_end is not None and on_ended is not None:     # at_end is only read when wanted
                on_ended(at_end)
            result.leftover_processes = box.kill_all(pid)
            result.memory = memory.reading()      # before the cgroup goes
            if status is None:
                _kill(pid)   # in case containment missed it (it was contained, so normally already dead)
                try:
                    _, st, ru = os.wait4(pid, 0)
                    status = (st, ru)
                except ChildProcessError:
                    status = (0, None)
            if watcher is not None:
                if watcher.fd in sel.get_map():
                    sel.unregister(watcher.fd)   # stays readable once the runner is gone
                watcher.close()
            pump.drain(drain_seconds)
        finally:
            pump.close()
            sel.close()
            result.containment_problem = "; ".join(p for p in (box.close(), memory.close()) if p) or None
            signal.pthread_sigmask(signal.SIG_SETMASK, masked)
    assert status is not None     # the runner was reaped above, in the loop or after killing it
    st, usage = status
    if not result.duration:    # interrupted before the runner ended
        result.duration = time.monotonic() - t0
        result.ended_at = time.time()
    if os.WIFSIGNALED(st):
        result.signal = os.WTERMSIG(st)
    elif os.WIFEXITED(st):
        result.exit_code = os.WEXITSTATUS(st)
    if usage is not None:
        result.rusage = {"user_seconds": usage.ru_utime, "system_seconds": usage.ru_stime,
                         "max_rss_kib": usage.ru_maxrss}
    result.results = bytes(pump.results)
    return result


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def kill_orphan(pid: int, start_time: float | None, cgroup: str | None = None) -> str:
    """Kill a runner left by a supervisor that died mid-run (simulated reboots only); says what it did.

    The process group is killed only when the live process ``pid`` started at
    ``start_time`` (psutil create_time): a missing or different start time means
    the pid may now belong to an unrelated process.  The runner's cgroup, whose
    name is unique to that execution, is emptied and removed whatever the pid says.
    """
    done: list[str] = []
    try:
        live = psutil.Process(pid).create_time()
    except psutil.Error:
        live = None
    if start_time is None:
        done.append(f"runner {pid} not killed: runner.json has no start time to check the pid against")
    elif live is None:
        done.append(f"runner {pid} is no longer running")
    elif abs(live - start_time) > _START_TIME_TOLERANCE:
        done.append(f"runner {pid} not killed: that pid now belongs to a process started at {live:.2f}, "
                    f"runner.json says {start_time:.2f}")
    else:
        try:
            os.killpg(pid, signal.SIGKILL)
            done.append(f"killed runner process group {pid}")
        except (ProcessLookupError, PermissionError) as e:
            done.append(f"runner process group {pid} not killed: {e.strerror}")
    if cgroup and os.path.isdir(cgroup):
        left = kill_cgroup(cgroup)
        remove_cgroup(cgroup)
        done.append(f"killed {len(left)} process(es) left in its cgroup {cgroup} and removed it")
    return "; ".join(done)
