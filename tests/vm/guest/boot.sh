#!/bin/sh
# Test-only: run at every boot of the VM-test guest by coldrun-vmtest.service
# (baked into the image), from the read-only payload disk.  Lines starting
# with VMTEST- are what the host-side test reads from the serial console.
#
# (coldrun is installed in /opt/coldrun already: tests/vm/vm_payload.py's prepared disk.)
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
    modprobe virtio_net || fail "modprobe virtio_net"   # the image has no udev coldplug to load it
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
    say "START perf_event_max_sample_rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate) system=$(systemctl is-system-running --wait 2>&1) uname=$(uname -r)"
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
