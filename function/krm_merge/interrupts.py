"""Termination signals (SIGINT, SIGTERM, SIGHUP): one exception, raised once, and what it interrupted.

The command line installs a :class:`Handler` as its very first step
(``cli.entry``), so that a Ctrl-C at any instant of a command ends it the
same way: :class:`Interrupted` (exit status 128+signal) is raised in the main
thread, the code it unwinds rolls back what it had started (the package
transaction drops a write that has not reached its commit point, and finishes
one that has: :mod:`krm_merge.txn` holds the signals back meanwhile with
:class:`held_back`), and
``entry`` says on stderr what happened.  Only the first signal raises: a
second Ctrl-C while the first one's clean-up runs does not cut it short.

Python runs a signal handler between any two bytecodes, also inside a
finalizer (a weakref callback of the import system, a ``__del__``), where it
drops the exception the handler raises after printing it as "Exception
ignored".  The handler takes that case over (``sys.unraisablehook``): nothing
is printed, the signal is remembered as :attr:`Handler.swallowed`, and the
package transaction raises it before it writes anything
(:meth:`Handler.raise_swallowed`), so the run ends as if it had landed there.

The handler also remembers whether a package transaction of this run passed
its commit point (``txn.commit`` sets :attr:`Handler.written`), so the message
tells the truth whenever the signal arrives: "nothing written" or "the write
was finished".  A program that uses krm-merge as a library gets the same
handling while it holds a package lock (:class:`krm_merge.txn.PackageLock`
installs a handler for that time when none is installed).

This module imports only ``_signal``, the C module behind ``signal``: the
public module builds its enums at import (about 0.5 ms), which the function
path and ``--version`` do not otherwise pay (tests/architecture/test_start_up.py).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    # typeshed types `signal`, not the C module behind it; the functions are the same
    import signal
    from typing import Any
else:
    import _signal as signal  # the functions and constants of `signal`, without its enums (see above)

NAMES = {number: name for name in ("SIGTERM", "SIGINT", "SIGHUP") if (number := getattr(signal, name, None))}
SIGNALS = tuple(NAMES)
SIGINT: int = signal.SIGINT


class Interrupted(SystemExit):
    """A termination signal arrived; exits with 128+signal (``written``: after a transaction's commit point)."""

    def __init__(self, signo: int, *, written: bool = False) -> None:
        super().__init__(128 + signo)
        self.signo = signo
        self.written = written


class Handler:
    """The handler of the termination signals for one run: raises :class:`Interrupted` at the first one.

    ``signo`` is the first signal received (None: none yet), ``written``
    whether a package transaction of the run passed its commit point.
    After :meth:`disarm` signals are only recorded.
    """

    __slots__ = ("signo", "written", "armed", "swallowed", "_old", "_old_hook")

    def __init__(self) -> None:
        self.signo: int | None = None
        self.written = False
        self.armed = True
        self.swallowed = False  # the Interrupted raised was dropped by a finalizer it interrupted (see the module)
        self._old: dict[int, Any] = {}
        self._old_hook: Any = None

    def __call__(self, signo: int, _frame: Any) -> None:
        if self.signo is not None or not self.armed:
            self.signo = self.signo or signo
            return  # the first signal's clean-up is running, or the run is over: it is not cut short
        self.signo = signo
        raise Interrupted(signo, written=self.written)

    def install(self) -> bool:
        """Handle the termination signals (those not ignored, as ``nohup`` asks); False off the main thread."""
        for signo in SIGNALS:
            if signal.getsignal(signo) in (signal.SIG_IGN, None):
                continue
            try:
                self._old[signo] = signal.signal(signo, self)
            except ValueError:  # only the main thread may set handlers
                self.restore()
                return False
        self._old_hook, sys.unraisablehook = sys.unraisablehook, self._unraisable
        return True

    def restore(self) -> None:
        """Put back the handlers :meth:`install` replaced."""
        for signo, old in self._old.items():
            signal.signal(signo, old)
        self._old.clear()
        if self._old_hook is not None:
            sys.unraisablehook, self._old_hook = self._old_hook, None

    def _unraisable(self, unraisable: Any) -> None:
        """``sys.unraisablehook``: this handler's exception, dropped by the finalizer it interrupted, is kept
        as :attr:`swallowed` instead of printed; anything else goes to the previous hook."""
        if isinstance(unraisable.exc_value, Interrupted) and unraisable.exc_value.signo == self.signo:
            self.swallowed = True
            return
        self._old_hook(unraisable)

    def raise_swallowed(self) -> None:
        """Raise the signal a finalizer swallowed, if one did (the transaction calls it before writing)."""
        if self.swallowed and self.armed and self.signo is not None:
            self.swallowed = False
            raise Interrupted(self.signo, written=self.written)

    def disarm(self) -> None:
        """From now on a signal is recorded, not raised (the run is finishing)."""
        self.armed = False


class held_back:
    """Hold the termination signals back for the length of a ``with`` block; they are taken when it ends.

    For what a signal must not cut in two: the package transaction from its
    commit point to its end, the lock file's creation and removal, a clean-up.
    """

    def __enter__(self) -> None:
        self._mask = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS) if SIGNALS else None

    def __exit__(self, *exc: object) -> None:
        if self._mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, self._mask)


def installed() -> Handler | None:
    """The krm-merge handler handling the termination signals now, if one is."""
    for signo in SIGNALS:
        handler = signal.getsignal(signo)
        if isinstance(handler, Handler):
            return handler
    return None


__all__ = ["NAMES", "SIGINT", "SIGNALS", "Handler", "Interrupted", "held_back", "installed"]
