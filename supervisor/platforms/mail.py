"""Notices by mail through the local ``sendmail -t -oi``, with a quota that survives reboots.

Krun's rules (reference/krun.md §8): without recipients nothing is sent; a
mail that counts against the quota is not sent once ``quota`` such mails
have gone, and the last one allowed says so; some notices (experiment
started, finished, fatal error, re-run needed, ETA available) bypass the
quota.  The count lives in ``counter`` (the supervisor backs it with the
schedule's fixed-width ``mails_sent`` header field) and is raised *before*
handing the mail to sendmail, so a power cut can lose one mail but never
let the quota be exceeded.  A failing sendmail only logs a warning: mail
is a courtesy, never a reason to stop an experiment.
"""

from __future__ import annotations

import socket
import textwrap
from dataclasses import dataclass
from email.message import EmailMessage
from email.policy import SMTP
from typing import Protocol

from supervisor.system import Commands, RealCommands

SENDMAIL = "/usr/sbin/sendmail"
WRAP_COLUMNS = 72
LAST_MAIL_NOTE = ("This is the last email coldrun will send for this experiment "
                  "(quota reached); further notices of this kind are only logged.")


class MailCount(Protocol):
    """Where the mails sent so far are counted (the schedule's MailCounter; MemoryCounter in tests)."""
    def get(self) -> int: ...
    def set(self, n: int) -> None: ...


@dataclass
class MemoryCounter:
    """A counter kept in memory: for tests and for simulated runs."""

    value: int = 0

    def get(self) -> int:
        return self.value

    def set(self, n: int) -> None:
        self.value = n


@dataclass(frozen=True)
class Notice:
    subject: str
    bypass_quota: bool


# The notices the supervisor sends, with Krun's quota rules.
STARTED = Notice("Benchmarking started", True)
FINISHED = Notice("Benchmarks complete", True)
FATAL = Notice("Fatal coldrun error", True)
RERUN = Notice("Benchmark needs to be re-run", True)
ETA_AVAILABLE = Notice("ETA for current experiment available", True)
BENCHMARK_FAILURE = Notice("Benchmark failure", False)   # subject gets ": <key>"
KERNEL_LOG_CHANGED = Notice("Kernel log changed", False)
ABORTED = Notice("Experiment aborted", True)


class NullLog:
    def warning(self, *a, **k) -> None: ...
    def info(self, *a, **k) -> None: ...


class Mailer:
    def __init__(self, recipients: list[str], quota: int, counter: MailCount, *,
                 commands: Commands | None = None, hostname: str | None = None,
                 sendmail: str = SENDMAIL, log=None):
        if quota < 0:
            raise ValueError("mail quota must be >= 0")
        self.recipients = list(recipients)
        self.quota = quota
        self.counter = counter
        self.commands = commands or RealCommands()
        self.hostname = hostname or socket.getfqdn()
        self.sendmail = sendmail
        self.log = log or NullLog()

    def notify(self, notice: Notice, body: str, *, detail: str | None = None) -> bool:
        subject = f"{notice.subject}: {detail}" if detail else notice.subject
        return self.send(subject, body, bypass_quota=notice.bypass_quota)

    def send(self, subject: str, body: str, *, bypass_quota: bool = False) -> bool:
        """Send one notice; True if it was handed to sendmail successfully."""
        if not self.recipients:
            return False
        if not bypass_quota:
            sent = self.counter.get()
            if sent >= self.quota:
                self.log.info("mail quota reached; not sent", subject=subject, quota=self.quota)
                return False
            if sent == self.quota - 1:
                body = f"{body.rstrip()}\n\n{LAST_MAIL_NOTE}"
            # Count first: a cut after this loses a mail rather than exceeding the quota.
            self.counter.set(sent + 1)
        message = self.compose(subject, body)
        result = self.commands.run([self.sendmail, "-t", "-oi"], input=message, timeout=60)
        if not result.ok:
            self.log.warning("sendmail failed; notice not delivered", subject=subject,
                             returncode=result.returncode, stderr=result.stderr.strip())
            return False
        self.log.info("mail sent", subject=subject, recipients=self.recipients)
        return True

    def compose(self, subject: str, body: str) -> str:
        short_host = self.hostname.split(".")[0]
        msg = EmailMessage(policy=SMTP.clone(linesep="\n"))
        msg["From"] = f"noreply@{self.hostname}"
        msg["To"] = ", ".join(self.recipients)
        msg["Subject"] = f"[coldrun:{short_host}] {subject}"
        msg.set_content(f"Message from coldrun running on {self.hostname}:\n\n"
                        + wrap(body) + "\n")
        return msg.as_string()


def wrap(text: str, width: int = WRAP_COLUMNS) -> str:
    """Wrap paragraphs at ``width`` columns, keeping blank lines and indented (verbatim) lines."""
    out: list[str] = []
    for line in text.splitlines():
        if not line.strip() or line[0] in " \t":
            out.append(line.rstrip())
        else:
            out.extend(textwrap.wrap(line, width, break_long_words=False,
                                     break_on_hyphens=False) or [""])
    return "\n".join(out)
