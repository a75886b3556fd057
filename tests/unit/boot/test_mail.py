"""Mail notices: quota, bypass rules, persistence across reboots, message shape."""

from __future__ import annotations

import email

import pytest

from supervisor.platforms import mail
from supervisor.platforms.mail import Mailer, MemoryCounter
from supervisor.system import CommandResult
from doubles import RecordingCommands


class Sendmail(RecordingCommands):
    """Records the message text handed to sendmail as well as the argv."""

    def __init__(self, returncode: int = 0):
        super().__init__(replies={(mail.SENDMAIL,): (returncode, "", "no MTA" if returncode else "")})
        self.messages: list[str] = []

    def run(self, argv, *, input=None, timeout=None) -> CommandResult:
        self.messages.append(input)
        return super().run(argv, input=input, timeout=timeout)


class Log:
    def __init__(self):
        self.warnings: list[str] = []

    def warning(self, event, **kw):
        self.warnings.append(event)

    def info(self, event, **kw):
        pass


def mailer(counter=None, quota=3, recipients=("a@example.org", "b@example.org"), **kw):
    cmds = kw.pop("commands", Sendmail())
    return Mailer(list(recipients), quota, counter or MemoryCounter(), commands=cmds,
                  hostname="bench1.lab.example.org", **kw), cmds


def test_nothing_is_sent_without_recipients():
    counter = MemoryCounter()
    m, cmds = mailer(counter, recipients=())
    assert m.send("Benchmark failure: x", "boom") is False
    assert m.send("Benchmarking started", "go", bypass_quota=True) is False
    assert cmds.calls == [] and counter.get() == 0


def test_sends_through_sendmail_t_oi_with_krun_headers():
    m, cmds = mailer()
    assert m.send("Benchmarking started", "hello", bypass_quota=True)
    assert cmds.calls == [("/usr/sbin/sendmail", "-t", "-oi")]
    msg = email.message_from_string(cmds.messages[0])
    assert msg["To"] == "a@example.org, b@example.org"
    assert msg["From"] == "noreply@bench1.lab.example.org"
    assert msg["Subject"] == "[coldrun:bench1] Benchmarking started"
    body = msg.get_payload()
    assert body.startswith("Message from coldrun running on bench1.lab.example.org:")
    assert "hello" in body


def test_quota_limits_and_warns_on_the_last_mail():
    counter = MemoryCounter()
    m, cmds = mailer(counter, quota=2)
    results = [m.send(f"Benchmark failure: b{i}", "failed") for i in range(4)]
    assert results == [True, True, False, False]
    assert len(cmds.calls) == 2 and counter.get() == 2
    assert "last email" not in cmds.messages[0]
    assert "last email" in cmds.messages[1]


def test_bypass_mails_are_sent_past_the_quota_and_not_counted():
    counter = MemoryCounter(5)
    m, cmds = mailer(counter, quota=5)
    assert m.send("Kernel log changed", "x") is False
    assert m.notify(mail.FINISHED, "done") is True
    assert m.notify(mail.RERUN, "again", detail="bench:vm:default") is True
    assert counter.get() == 5 and len(cmds.calls) == 2
    assert "[coldrun:bench1] Benchmark needs to be re-run: bench:vm:default" in cmds.messages[1]


def test_the_count_survives_a_reboot():
    # The supervisor backs the counter with the schedule file; a new Mailer
    # at the next boot sees the same count.
    counter = MemoryCounter()
    first, _ = mailer(counter, quota=2)
    first.notify(mail.BENCHMARK_FAILURE, "f", detail="a")
    after_reboot, cmds = mailer(counter, quota=2)
    after_reboot.notify(mail.KERNEL_LOG_CHANGED, "k")
    after_reboot.notify(mail.KERNEL_LOG_CHANGED, "k")
    assert counter.get() == 2 and len(cmds.calls) == 1
    assert "last email" in cmds.messages[0]


def test_a_failing_sendmail_only_warns_and_still_counts():
    counter, log = MemoryCounter(), Log()
    m, cmds = mailer(counter, commands=Sendmail(returncode=75), log=log)
    assert m.send("Benchmark failure: x", "boom") is False
    assert counter.get() == 1
    assert log.warnings == ["sendmail failed; notice not delivered"]


def test_body_is_wrapped_at_72_columns_keeping_indented_lines():
    m, cmds = mailer()
    long = " ".join(["word"] * 60)
    tb = "    File \"/x.py\", line 1, in <module> " + "y" * 80
    m.send("Fatal coldrun error", long + "\n\n" + tb, bypass_quota=True)
    body = email.message_from_string(cmds.messages[0]).get_payload(decode=True).decode()
    lines = body.splitlines()
    assert max(len(l) for l in lines if l.startswith("word")) <= 72
    assert tb in lines


def test_negative_quota_is_rejected():
    with pytest.raises(ValueError):
        Mailer(["a@b"], -1, MemoryCounter())
