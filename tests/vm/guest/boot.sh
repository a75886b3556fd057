#!/bin/sh
# Test-only: run at every boot of the VM-test guest by coldrun-vmtest.service
# (baked into the image), from the read-only payload disk.  Lines starting
# with VMTEST- are what the host-side test reads from the serial console.
#
# mode "prepare": install coldrun as the README says (venv + pip install of
#   the wheel), compile the C benchmark, report the system, power off.
# mode "experiment": on the first boot `coldrun start`; on later boots watch
#   the experiment with `coldrun status` and power off when it is finished
#   (with a "simulate" file: `coldrun start --simulate-reboots`, then power off).
# mode "lab": name the guest, accept the test's key, start sshd (every boot).
P=/mnt/payload
M=/var/lib/coldrun-vmtest
COLDRUN=/opt/coldrun/bin/coldrun
say() { echo "VMTEST-$*" > /dev/console; }
fail() { say "SETUP-FAILED $*"; systemctl poweroff; exit 1; }

say "BOOT $(cat /proc/sys/kernel/random/boot_id)"
mode=$(cat "$P/mode")
mkdir -p "$M"

if [ "$mode" = prepare ]; then
    state=$(systemctl is-system-running --wait 2>&1)
    install -m 755 "$P/fake-sendmail" /usr/sbin/sendmail
    # The README's install: a venv, then pip install of the coldrun wheel.
    # (--no-compile: byte-compiling everything under an emulated CPU costs minutes.)
    # pip goes into the venv from Debian's wheel in the same install (as `python3 -m venv` would put it
    # there, without ensurepip's byte-compiling): the lab's Ansible role upgrades coldrun with it.
    python3 -m venv --without-pip /opt/coldrun || fail venv
    pip_wheel=$(ls /usr/share/python-wheels/pip-*.whl | head -n 1)
    # numpy and scipy: the analysis a [stop] experiment runs between executions; pyDOE3: screening designs.
    /opt/coldrun/bin/python "$pip_wheel/pip" install -q --no-compile --no-index \
        --find-links "$P/wheels" "$pip_wheel" coldrun numpy scipy pyDOE3 || fail pip
    /opt/coldrun/bin/python -m pip --version > /dev/null || fail "pip in the venv"
    "$COLDRUN" --help > /dev/null || fail "coldrun --help"
    # Byte-compile, once for every test's copy of this disk, what the boot service's coldrun, status,
    # export, the Python runner, a [stop] decision and a screening plan import (as a first run would,
    # writing __pycache__ as root); a whole compileall of numpy/scipy would cost more than it saves.
    /opt/coldrun/bin/python -c 'import supervisor.cli, iteration_runners.python.iterations_runner
import analysis.pilot.stopping, analysis.pilot.wps, pyDOE3' || fail "warm-up imports"
    say "STARTUP $(systemd-analyze 2>&1 | head -n 1) | $(systemd-analyze blame 2>&1 | head -n 6 | tr -s ' ' | tr '\n' ';')"
    say "PREPARED system=$state python=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])') uname=$(uname -r) coldrun=$COLDRUN"
    sync
    systemctl poweroff
    exit 0
fi

if [ "$mode" = lab ]; then
    # Every boot: the network qemu forwards port 22 to, then sshd; Ansible
    # (test_lab.py) does everything else over SSH, coldrun's boot unit the runs.
    if [ ! -e "$M/named" ]; then
        name=$(cat "$P/hostname")
        echo "$name" > /etc/hostname
        sed -i "s/coldrun-vm/$name/" /etc/hosts
        install -d -m 700 /root/.ssh
        install -m 600 "$P/authorized_keys" /root/.ssh/authorized_keys
        touch "$M/named"
        sync
    fi
    hostname "$(cat /etc/hostname)"
    i=0
    while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 60 ]; do sleep 0.5; i=$((i + 1)); done
    ip link set eth0 up && ip addr replace 10.0.2.15/24 dev eth0 || fail network
    systemctl start ssh || fail sshd
    say "SSH-READY host=$(hostname)"
    exit 0
fi

STATE_DIR=$(cat "$P/state_dir")
# Not under /root (mode 700): the benchmark runs as a fresh unprivileged user
# who must be able to read it.
EXP=/srv/coldrun/vmtest
if [ ! -e "$M/started" ]; then
    rm -rf "$EXP" && mkdir -p "$(dirname "$EXP")" && cp -r "$P/exp" "$EXP" && chmod -R a+rX "$EXP"
    for c in "$EXP"/benchmarks/*/c/bench.c; do
        gcc -O2 -Wall -fPIC -shared -o "${c%.c}.so" "$c" || fail gcc
    done
    if [ -s "$P/hold" ]; then
        # Test-only: the boot service's coldrun waits at this point so a power cut lands there.
        mkdir -p /etc/systemd/system/coldrun@.service.d
        printf '[Service]\nEnvironment=COLDRUN_TEST_HOLD_AT=%s\n' "$(cat "$P/hold")" \
            > /etc/systemd/system/coldrun@.service.d/vmtest-hold.conf
    fi
    touch "$M/started"
    sync
    say "START perf_event_max_sample_rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)"
    if [ -e "$P/simulate" ]; then
        # Test-only: the whole experiment in this boot (--simulate-reboots), then power off.
        "$COLDRUN" start "$EXP/exp.toml" --state-dir "$STATE_DIR" --simulate-reboots > "$M/start.out" 2>&1
        say "FINISHED simulated rc=$? $(tail -c 400 "$M/start.out" | tr '\n' ' ')"
        sync
        systemctl poweroff
        exit 0
    fi
    "$COLDRUN" start "$EXP/exp.toml" --state-dir "$STATE_DIR" > "$M/start.out" 2>&1
    rc=$?
    say "START-EXIT rc=$rc $(tail -c 400 "$M/start.out" | tr '\n' ' ')"
    [ $rc -eq 0 ] || systemctl poweroff
    exit 0
fi

# With a "poke" file: once, while a benchmark runs (its fresh user owns a process), what systemd does on
# a busy machine: reload its units and start a transient one.  Either may make systemd write "-cpuset" to
# the root cgroup, which would dissolve the benchmark partition under the running benchmark.
if [ -e "$P/poke" ] && [ ! -e "$M/poked" ]; then
    (
        part=/sys/fs/cgroup/coldrun.bench/cpuset.cpus.partition
        while ! pgrep -u coldrunbench > /dev/null 2>&1; do sleep 0.5; done
        before=$(cat "$part" 2>&1)
        running_before=$(pgrep -u coldrunbench | wc -l)
        systemctl daemon-reload
        systemd-run --quiet --wait --unit=vmtest-poke /bin/true
        after=$(cat "$part" 2>&1)
        running=$(pgrep -u coldrunbench | wc -l)
        touch "$M/poked"
        sync
        say "POKED partition_before=$before partition_after=$after benchmark_processes=$running_before,$running"
    ) &
fi

# Later boots: watch the experiment with `coldrun status` (reads only, no
# lock) while `coldrun resume` runs, and power off once coldrun has removed
# its unit (the experiment is finished).  If the unit is still installed but
# nothing runs it for a while, something broke: say so and power off.
idle=0
n=0
last_rate=
while true; do
    n=$((n + 1))
    active=$(systemctl list-units --no-legend --state=active,activating 'coldrun@*' | wc -l)
    rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
    if [ "$rate" != "$last_rate" ]; then
        say "SETTING active=$active perf_event_max_sample_rate=$rate"
        last_rate=$rate
    fi
    # `coldrun status` costs ~20 s of emulated CPU (measured: its imports alone): ask once while coldrun
    # resume runs (test_real_reboots checks that answer), then every few minutes, not at every boot.
    if { [ "$active" -ge 1 ] && [ ! -e "$M/status-asked" ]; } || [ $((n % 300)) -eq 0 ]; then
        touch "$M/status-asked"
        out=$("$COLDRUN" status "$STATE_DIR" 2>&1)
        rc=$?
        say "STATUS n=$n rc=$rc active=$active perf_event_max_sample_rate=$rate $(echo "$out" | tr '\n' ' ' | cut -c1-300)"
    fi
    if [ ! -e /etc/systemd/system/coldrun@.service ] && [ "$active" -eq 0 ]; then
        say "FINISHED perf_event_max_sample_rate=$rate units=$(systemctl list-unit-files --no-legend 'coldrun@*' | wc -l)"
        sync
        systemctl poweroff
        exit 0
    fi
    if [ "$active" -eq 0 ]; then idle=$((idle + 1)); else idle=0; fi
    if [ $idle -ge 30 ]; then
        say "STUCK $(systemctl list-units --all --no-legend 'coldrun@*' | tr '\n' ' ')"
        journalctl -b -u 'coldrun@*' --no-pager | tail -n 40 > /dev/console
        sync
        systemctl poweroff
        exit 1
    fi
    sleep 1
done
