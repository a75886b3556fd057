"""Process execution: start one runner and wait for it, without a shell.

The child gets its own process group, heap (RLIMIT_DATA) and stack
(RLIMIT_STACK) limits, stdin from /dev/null, stdout/stderr on pipes and the
results channel on file descriptor 3 (contract A).  All other descriptors are
closed.  The supervisor blocks in one selector over the three pipes and a
pidfd (or a SIGCHLD wake-up pipe where pidfd is missing), with the deadline as
the select timeout: no sleep-polling.  Output is drained continuously and only
bounded tails are kept; on timeout the whole process group is killed.
"""

from __future__ import annotations

import errno
import fcntl
import os
import resource
import selectors
import signal
import time
from dataclasses import dataclass, field

RESULTS_FD = 3
DEFAULT_TAIL_BYTES = 64 * 1024
DEFAULT_RESULTS_LIMIT = 64 * 1024 * 1024
_READ_CHUNK = 256 * 1024


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
        return bytes(self.buf[-self.limit:]).decode("utf-8", "replace")

    @property
    def truncated(self) -> bool:
        return self.total > self.limit


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
    started_at: float = 0.0             # wall clock (epoch seconds)
    ended_at: float = 0.0
    duration: float = 0.0               # monotonic seconds
    rusage: dict[str, float] = field(default_factory=dict)


def _high_dup(fd: int) -> int:
    return fcntl.fcntl(fd, fcntl.F_DUPFD, 10)


def _child(argv: list[str], env: dict[str, str], cwd: str, heap: int | None, stack: int | None,
           fds: tuple[int, int, int, int], err_w: int) -> None:
    """Runs in the forked child; never returns."""
    try:
        os.setpgid(0, 0)
        for limit, value in ((resource.RLIMIT_DATA, heap), (resource.RLIMIT_STACK, stack)):
            if value is not None:
                soft, hard = resource.getrlimit(limit)
                new_hard = value if hard == resource.RLIM_INFINITY else min(value, hard)
                resource.setrlimit(limit, (min(value, new_hard), new_hard))
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
        self._old_wakeup = None
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
            signal.set_wakeup_fd(self._old_wakeup)
            signal.signal(signal.SIGCHLD, self._old_handler)
            os.close(self._pipe[0])
            os.close(self._pipe[1])
        else:
            os.close(self.fd)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_process(argv: list[str], env: dict[str, str], *, cwd: str, heap_limit: int | None,
                stack_limit: int | None, timeout: float | None,
                tail_bytes: int = DEFAULT_TAIL_BYTES, results_limit: int = DEFAULT_RESULTS_LIMIT,
                on_started=None) -> ProcessResult:
    """Run ``argv`` to completion (or timeout) and return what it did."""
    if "/" not in argv[0]:   # execve needs a path; look names up on the child's PATH, here in the parent
        import shutil
        found = shutil.which(argv[0], path=env.get("PATH", ""))
        if found:
            argv = [found, *argv[1:]]
    out_r, out_w = os.pipe2(os.O_CLOEXEC)
    err_r, err_w = os.pipe2(os.O_CLOEXEC)
    res_r, res_w = os.pipe2(os.O_CLOEXEC)
    exec_r, exec_w = os.pipe2(os.O_CLOEXEC)
    devnull = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    started_at = time.time()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(argv, env, cwd, heap_limit, stack_limit, (devnull, out_w, err_w, res_w), exec_w)
    try:
        os.setpgid(pid, pid)   # also in the parent: no race with killpg below
    except (PermissionError, ProcessLookupError):
        pass
    for fd in (out_w, err_w, res_w, exec_w, devnull):
        os.close(fd)
    result = ProcessResult(pid=pid, stdout=Tail(tail_bytes), stderr=Tail(tail_bytes), started_at=started_at)
    exec_error = b""
    while True:   # the exec pipe closes on successful exec, or carries the error
        chunk = os.read(exec_r, 4096)
        if not chunk:
            break
        exec_error += chunk
    os.close(exec_r)
    if exec_error:
        result.launch_error = exec_error.decode("utf-8", "replace")
    if on_started is not None and not exec_error:
        on_started(pid)

    deadline = None if timeout is None else t0 + timeout
    watcher = _ExitWatcher(pid)
    sel = selectors.DefaultSelector()
    streams = {out_r: result.stdout, err_r: result.stderr, res_r: None}
    for fd in streams:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    sel.register(watcher.fd, selectors.EVENT_READ)
    results = bytearray()
    status = None
    try:
        while streams or status is None:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                result.timed_out = True
                break
            for key, _ in sel.select(remaining):
                fd = key.fd
                if fd == watcher.fd:
                    watcher.drain()
                    got_pid, st, ru = os.wait4(pid, os.WNOHANG)
                    if got_pid == pid:
                        status = (st, ru)
                        sel.unregister(watcher.fd)
                        _kill_group(pid)   # leftovers of the runner must not outlive it
                    continue
                try:
                    data = os.read(fd, _READ_CHUNK)
                except BlockingIOError:
                    continue
                if not data:
                    sel.unregister(fd)
                    os.close(fd)
                    del streams[fd]
                elif fd == res_r:
                    if len(results) + len(data) > results_limit:
                        result.results_oversize = True
                    else:
                        results += data
                else:
                    streams[fd].add(data)
    finally:
        if status is None:
            _kill_group(pid)
            try:
                _, st, ru = os.wait4(pid, 0)
                status = (st, ru)
            except ChildProcessError:
                status = (0, None)
        for fd in list(streams):
            try:
                sel.unregister(fd)
            except KeyError:
                pass
            os.close(fd)
        sel.close()
        watcher.close()
    st, ru = status
    result.duration = time.monotonic() - t0
    result.ended_at = time.time()
    if os.WIFSIGNALED(st):
        result.signal = os.WTERMSIG(st)
    elif os.WIFEXITED(st):
        result.exit_code = os.WEXITSTATUS(st)
    if ru is not None:
        result.rusage = {"user_seconds": ru.ru_utime, "system_seconds": ru.ru_stime,
                         "max_rss_kib": ru.ru_maxrss}
    result.results = bytes(results)
    return result


def kill_orphan(pid: int, start_time: float | None) -> bool:
    """Kill a runner group left by a supervisor that died mid-run (simulated reboots only).

    ``start_time`` (psutil create_time) guards against a reused pid.
    """
    import psutil
    try:
        p = psutil.Process(pid)
        if start_time is not None and abs(p.create_time() - start_time) > 0.05:
            return False
    except psutil.NoSuchProcess:
        pass
    try:
        os.killpg(pid, signal.SIGKILL)
        return True
    except (ProcessLookupError, PermissionError):
        return False
    except OSError as e:  # pragma: no cover - unexpected
        if e.errno == errno.ESRCH:
            return False
        raise
