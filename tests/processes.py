"""Helpers for tests that start city360 in a child process and signal it."""

from __future__ import annotations

import signal


def sigint_as_from_a_terminal() -> None:
    """``preexec_fn`` for a child that a test interrupts with SIGINT (Ctrl-C).

    A shell started without job control makes its background commands ignore SIGINT, and
    children inherit that: under ``make test &`` or ``nohup`` a Python child then never sees
    KeyboardInterrupt and the test's SIGINT does nothing. Resetting it to the default before
    ``exec`` makes the child start the way a foreground command in a terminal does."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
