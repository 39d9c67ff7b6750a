"""A stop that lands in a finalizer is not lost (tuner/_common/stopping.py).

Python swallows an exception raised in ``__del__`` ("Exception ignored in ..."); a SIGTERM that
arrived there was lost, and, SIGTERM being ignored from then on, CI's run went on with its audit
after the signal. Each case runs in its own process: the signal is sent to that process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import os, signal, threading, time
    from tuner._common import stopping

    class Slow:
        def __del__(self):  # the signal arrives while this runs
            t = time.monotonic()
            while time.monotonic() - t < 1.0:
                pass

    threading.Timer(0.3, os.kill, args=(os.getpid(), signal.{signal})).start()
    t0 = time.monotonic()
    try:
        with stopping.terminating_as_interrupt():
            s = Slow()
            del s
            while time.monotonic() - t0 < 8:
                sum(range(1000))
        print("went on")
    except KeyboardInterrupt as exc:
        print(type(exc).__name__, round(time.monotonic() - t0, 1))
""")


@pytest.mark.parametrize(("sig", "raised"), [("SIGTERM", "Terminated"),
                                             ("SIGINT", "KeyboardInterrupt")])
def test_a_stop_swallowed_by_a_finalizer_is_delivered_again(sig: str, raised: str) -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(signal=sig)], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    name, seconds = out.stdout.split()
    assert name == raised, out.stdout + out.stderr
    # the signal cuts the finalizer short (0.3 s) and is raised again at once; before, the loop
    # ran its 8 s
    assert float(seconds) < 4, out.stdout


def test_other_unraisable_exceptions_still_reach_the_hook_there_was() -> None:
    script = textwrap.dedent("""
        import sys
        from tuner._common import stopping
        seen = []
        sys.unraisablehook = lambda u: seen.append(type(u.exc_value).__name__)
        with stopping.terminating_as_interrupt():
            class Bad:
                def __del__(self):
                    raise ValueError("in a finalizer")
            b = Bad()
            del b
        print(seen)
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert out.stdout.strip() == "['ValueError']", out.stdout + out.stderr
