"""A test-only external runner whose helper process escapes: <benchmark file> <iterations> <param> <debug>.

The benchmark file names a behaviour:
  daemon       forks a helper that calls setsid, forks again and sleeps, holding
               stdout, stderr and fd 3 open; the runner then writes a valid
               document and exits 0
  daemon-hang  the same helper, then the runner sleeps for ever
The helper's pid goes to daemon.pid next to the benchmark file.
"""

import os
import sys
import time

from fake_runner import OK_SCALE, document, write_doc


def start_daemon(pid_file: str) -> int:
    r, w = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:          # the grandchild: new session, parent gone, pipes still open
            os.close(r)
            os.write(w, str(os.getpid()).encode())
            os.close(w)
            time.sleep(600)
        os._exit(0)
    os.close(w)
    daemon = int(os.read(r, 64))
    os.close(r)
    os.wait()
    with open(pid_file, "w") as f:
        f.write(str(daemon))
    return daemon


def main():
    bench, iterations, param = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with open(bench) as f:
        behaviour = f.read().strip()
    daemon = start_daemon(os.path.join(os.path.dirname(bench), "daemon.pid"))
    print(f"started helper {daemon}", flush=True)
    if behaviour == "daemon":
        write_doc(document([(param + i / 1e3) * OK_SCALE for i in range(iterations)]))
    elif behaviour == "daemon-hang":
        time.sleep(600)
    else:
        sys.exit(f"unknown behaviour {behaviour!r}")


if __name__ == "__main__":
    main()
