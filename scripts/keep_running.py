"""`keep_running.py NAME COMMAND...`: run COMMAND, and start it again whenever it exits, until this is
told to stop (SIGTERM or SIGINT, which it passes on). `make run` wraps each Procfile process in it, so
a worker or beat that dies is restarted instead of honcho stopping every process.

A process that keeps dying is restarted after 1 s, then 2, 4 … up to 30 s; one that ran a minute
starts from 1 s again.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

FIRST_DELAY, MAX_DELAY, STABLE_AFTER = 1.0, 30.0, 60.0


def main() -> None:
    name, command = sys.argv[1], sys.argv[2:]
    stopping = False
    child: subprocess.Popen | None = None

    def stop(signum, _frame):
        nonlocal stopping
        stopping = True
        if child is not None and child.poll() is None:
            child.send_signal(signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    delay = FIRST_DELAY
    while not stopping:
        started = time.monotonic()
        child = subprocess.Popen(command)
        code = child.wait()
        if stopping:
            sys.exit(code)
        delay = FIRST_DELAY if time.monotonic() - started > STABLE_AFTER else delay
        print(f"keep_running: {name} exited with {code}; starting it again in {delay:.0f} s", flush=True)
        deadline = time.monotonic() + delay
        while not stopping and time.monotonic() < deadline:
            time.sleep(0.1)
        delay = min(delay * 2, MAX_DELAY)


if __name__ == "__main__":
    main()
