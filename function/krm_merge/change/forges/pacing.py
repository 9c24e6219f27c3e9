"""A forge's request budget, kept ahead of its limits and shared by every process that speaks to it as one identity.

Forges limit requests per identity, and a fleet of thousands of pull requests meets
those limits long before its merges are slow: GitHub allows a token 5,000 requests an
hour, and content-creating requests (``POST``, ``PATCH``, ``PUT``, ``DELETE``) 80 a
minute and 500 an hour (its "Rate limits for the REST API" page; docs/pull-requests.md
has every forge's figures and their sources).  Retrying after a 403 or 429 is not
enough: GitHub warns that requests made while limited may get an integration banned.
So each request first takes a place in the budget (:meth:`Pacer.reserve`), waiting
until the budget has one: never more than ``requests`` requests in any ``seconds``
for each :class:`Rate`, never before a ``Retry-After`` or a reset time the forge
announced with no request left (``X-RateLimit-Remaining``/``X-RateLimit-Reset``,
GitLab's ``RateLimit-Remaining``/``RateLimit-Reset``).

**Shared.** A fleet's shards (separate processes, maybe at once on one machine, or on
one volume) speak to the forge as the same identity, so the budget is not the process's:
it is a small file under krm-merge's cache folder (``$XDG_CACHE_HOME/krm-merge/forge/``),
one per API host and identity (its name holds a hash of the host and the auth header,
never the token), read and written under an exclusive ``flock``
(:class:`krm_merge.files.locked`) and replaced atomically (:mod:`krm_merge.files`).

**Counted until the answer is in.** A request counts from the moment it takes its place
until its answer has been read (a place taken and not yet settled counts as in flight,
until its deadline if its process died), and a new request may go only while fewer than
``requests`` of them ended within the last ``seconds``.  The forge receives each request
between those two moments, so whatever instant it counts a request at, no window of its
own holds more than the budget.  Times are counted in buckets of a sixtieth of a window,
a request counted in its whole bucket: the pace is at most a sixtieth slower than the
limit, never faster.

**Untrusted when read.** The file is read without following a link, at most
:data:`MAX_STATE` bytes, and parsed strictly (every field's type and bounds); a file
that is not exactly that is ignored with a warning (the budget starts afresh and the
file is rewritten), never a traceback.  Times further ahead than a window (a clock set
back, a hand-edited file) are dropped; a wait the forge asked for is kept at most
:data:`MAX_AHEAD` seconds.  A folder that cannot hold the file (read-only, full) is a
warning too: the run then paces itself alone.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from krm_merge import files
from krm_merge.change.errors import ChangeError
from krm_merge.krm.display import escape_controls
from krm_merge.records import Record

BUDGET_ENV = "KRM_MERGE_FORGE_BUDGET"
WRITES = frozenset({"POST", "PATCH", "PUT", "DELETE"})
"""The content-creating methods: the ones GitHub's secondary limit counts."""
BUCKETS = 60  # buckets per window
MAX_STATE = 64 * 1024  # bytes of a pacing state file; more is not one
MAX_AHEAD = 3600.0  # seconds a wait the forge asked for is kept (GitHub's primary window)
MAX_RATES = 16
MAX_BUCKETS = 4 * BUCKETS  # per rate, in a file read back (one window holds BUCKETS + 1)
MAX_PENDING = 256
MAX_COUNT = 10**7
MAX_REQUESTS = 10**6  # requests of one configured rate
MIN_SECONDS, MAX_SECONDS = 1.0, 86_400.0  # the shortest and longest window of a rate: a second, a day
LATEST = 1e11  # a time (epoch seconds) past this is not one (the year 5138)
_HEX = re.compile(r"[0-9a-f]{16}")
_KEY = re.compile(r"(all|writes):([0-9]{1,7})/([0-9]{1,5}(?:\.[0-9]{1,3})?)s")
_ITEM = re.compile(r"(?:(all|writes):)?([0-9]{1,7})/([0-9]{1,5}(?:\.[0-9]{1,3})?)([smh])")
_UNIT = {"s": 1.0, "m": 60.0, "h": 3600.0}
_SAFE = re.compile(r"[^A-Za-z0-9.-]")


class Rate(Record):
    """At most ``requests`` requests in any ``seconds``; with ``writes``, counting content-creating ones only."""

    requests: int
    seconds: float
    writes: bool = False

    @property
    def key(self) -> str:
        """The rate as the state file names it: ``writes:80/60s``."""
        return f"{'writes' if self.writes else 'all'}:{self.requests}/{_number(self.seconds)}s"

    def words(self) -> str:
        """``80 content-creating requests a minute``, ``5000 requests an hour``, ``8 requests per 6 s``."""
        what = "content-creating requests" if self.writes else "requests"
        per = {60.0: "a minute", 3600.0: "an hour"}.get(self.seconds, f"per {_number(self.seconds)} s")
        return f"{self.requests} {what} {per}"


_GITHUB = (Rate(5000, 3600.0), Rate(80, 60.0, True), Rate(500, 3600.0, True))
DEFAULT_BUDGETS: dict[str, tuple[Rate, ...]] = {
    # GitHub: "Rate limits for the REST API" (docs.github.com): 5,000 requests an hour for a token (a GitHub
    # App on Enterprise Cloud: 15,000); secondary: 80 content-generating requests a minute and 500 an hour.
    "github": _GITHUB,
    # GitLab.com: "GitLab.com rate limits": authenticated API traffic, 2,000 requests a minute for a user.
    "gitlab": (Rate(2000, 60.0),),
    # Bitbucket Cloud: "API request limits": 1,000 requests an hour (a rolling hour) for repository data,
    # the lowest of its scaled 1,000-10,000.
    "bitbucket": (Rate(1000, 3600.0),),
    # Gitea and Forgejo publish no API limit (an instance's operator may set one in front of it): GitHub's
    # figures, which no integration that keeps to them is refused for elsewhere.
    "gitea": _GITHUB,
}


def default_budget(forge: str) -> tuple[Rate, ...]:
    """The documented budget of ``forge`` (a forge that publishes none: Gitea's, GitHub's figures)."""
    return DEFAULT_BUDGETS.get(forge, DEFAULT_BUDGETS["gitea"])


def budget_from(environ: Mapping[str, str]) -> tuple[Rate, ...] | None:
    """The budget ``KRM_MERGE_FORGE_BUDGET`` sets (None: unset, each forge's default; ``none``: no rate).

    Comma-separated rates ``[all:|writes:]REQUESTS/DURATION``, a duration a number of
    ``s``, ``m`` or ``h``: ``all:5000/1h,writes:80/1m,writes:500/1h``.  Anything else is
    a ``pull request`` error naming the variable.
    """
    raw = environ.get(BUDGET_ENV, "").strip()
    if not raw:
        return None
    if raw == "none":
        return ()
    rates: list[Rate] = []
    for item in raw.split(","):
        found = _ITEM.fullmatch(item.strip())
        seconds = round(float(found.group(3)) * _UNIT[found.group(4)], 3) if found else 0.0
        if found is None or not (0 < int(found.group(2)) <= MAX_REQUESTS and MIN_SECONDS <= seconds <= MAX_SECONDS) \
                or len(rates) == MAX_RATES:
            raise ChangeError("pull request", f"{BUDGET_ENV} must be 'none' or up to {MAX_RATES} comma-separated "
                              f"rates [all:|writes:]REQUESTS/DURATION (1 to {MAX_REQUESTS} requests, a duration in "
                              f"s, m or h from 1s to 24h, e.g. writes:80/1m), got {raw[:80]!r}")
        rates.append(Rate(int(found.group(2)), seconds, found.group(1) == "writes"))
    return tuple(rates)


class Tally:
    """What a run asked of the forges: requests sent and seconds waited for their budgets, per forge and API
    host, and the warnings pacing had (a broken state file); one tally may serve many clients (a fleet)."""

    def __init__(self) -> None:
        self.used: dict[tuple[str, str], list[float]] = {}  # (forge, host) -> [requests, seconds waited]
        self.warnings: list[str] = []
        self._said = 0

    def sent(self, forge: str, host: str) -> None:
        """One request sent."""
        self.used.setdefault((forge, host), [0, 0.0])[0] += 1

    def waited(self, forge: str, host: str, seconds: float) -> None:
        """Seconds waited for the budget before a request."""
        self.used.setdefault((forge, host), [0, 0.0])[1] += seconds

    def warn(self, text: str) -> None:
        """A warning for the run's report, once."""
        if text not in self.warnings:
            self.warnings.append(text)

    def new_warnings(self) -> list[str]:
        """The warnings not taken yet (each is reported once)."""
        new, self._said = self.warnings[self._said:], len(self.warnings)
        return new


class _Broken(Exception):
    """A pacing state file that is not one; the argument says why, in words fit for a warning."""


class Pacer:
    """The budget of one API host and identity, kept in the state file of ``folder`` (see the module docstring).

    ``identity``: what the forge knows the requests by (the auth headers); only its hash
    is written.  ``wall`` is the time (epoch seconds: processes share it); ``warn`` takes
    the warnings.
    """

    def __init__(self, folder: str, host: str, identity: str, rates: tuple[Rate, ...], *,
                 wall: Callable[[], float] = time.time, warn: Callable[[str], None] = lambda text: None) -> None:
        digest = hashlib.sha256(f"{host}\n{identity}".encode("utf-8", "surrogatepass")).hexdigest()[:32]
        name = f"{_SAFE.sub('_', host)[:64]}-{digest}"
        self.folder = folder
        self.path = os.path.join(folder, name + ".json")
        self.lock = os.path.join(folder, name + ".lock")
        self.host = host
        self.rates = rates
        self.wall = wall
        self.warn = warn
        self._alone: dict[str, Any] | None = None  # the state, when the folder cannot hold it
        self._rewrite = False  # the file read was broken: written afresh even by a step that changed nothing

    def reserve(self, writes: bool, seconds: float) -> tuple[str | None, float, str]:
        """A place for one request that may go now (its id), or none, the seconds to wait and what asks them.

        ``writes``: a content-creating request; ``seconds``: its deadline (a place never
        settled counts until then).
        """
        def step(state: dict[str, Any], now: float) -> tuple[tuple[str | None, float, str], bool]:
            wait, why = _wait(state, self.rates, writes, now)
            if wait > 0:
                return (None, wait, why), False
            ticket = os.urandom(8).hex()
            state["pending"][ticket] = [now, now + min(seconds, MAX_AHEAD), writes]
            remaining = state["remaining"]
            if remaining is not None:
                remaining[0] = max(0, remaining[0] - 1)
            return (ticket, 0.0, ""), True

        return self._update(step)

    def settle(self, ticket: str, remaining: tuple[int, float] | None = None) -> None:
        """The request of ``ticket`` answered (or failed) now; ``remaining``: what the forge's headers say is left
        until when (requests, epoch seconds)."""
        def step(state: dict[str, Any], now: float) -> tuple[None, bool]:
            entry = state["pending"].pop(ticket, None)
            if entry is not None:
                _count(state, self.rates, bool(entry[2]), now)
            if remaining is not None:
                _take_remaining(state, remaining, now)
            return None, True

        self._update(step)

    def block(self, until: float) -> None:
        """No request of this identity before ``until`` (epoch seconds): the wait a forge asked for."""
        def step(state: dict[str, Any], now: float) -> tuple[None, bool]:
            state["block"] = max(state["block"], min(until, now + MAX_AHEAD))
            return None, True

        self._update(step)

    # --- the file ----------------------------------------------------------------------------

    def _update(self, step: Callable[[dict[str, Any], float], tuple[Any, bool]]) -> Any:
        """Run ``step`` on the state under the lock (read, changed, written back when it changed)."""
        if self._alone is None:
            try:
                os.makedirs(self.folder, exist_ok=True)
                with files.locked(self.lock):
                    now = self.wall()
                    state = self._read(now)
                    result, changed = step(state, now)
                    if changed or self._rewrite:
                        files.write_file_atomic(self.path, _dumped(state, self.host))
                        self._rewrite = False
                return result
            except OSError as err:
                self.warn(f"the forges' pacing state cannot be kept in {escape_controls(self.folder)} "
                          f"({escape_controls(err.strerror or str(err))}): this run paces its own requests only")
                self._alone = _fresh()
        now = self.wall()
        _prune(self._alone, self.rates, now)
        return step(self._alone, now)[0]

    def _read(self, now: float) -> dict[str, Any]:
        """The state in the file (none: a fresh one); a broken file is a warning and a fresh state."""
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
                         | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:
            return _fresh()
        except OSError as err:  # ELOOP: a link where the file should be
            self._remove()
            return self._broken(f"not readable as a file ({escape_controls(err.strerror or str(err))})")
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                self._remove()
                return self._broken("not a regular file")
            if info.st_size > MAX_STATE:
                return self._broken(f"larger than {MAX_STATE:,} bytes")
            raw = os.read(fd, MAX_STATE + 1)
        finally:
            os.close(fd)
        try:
            state = _parsed(raw)
        except _Broken as err:
            return self._broken(str(err))
        _prune(state, self.rates, now)
        return state

    def _remove(self) -> None:
        """A link, FIFO or folder where the file should be, removed (under the lock), so that the atomic write that
        replaces it never opens it (it reads the bytes it replaces, to put them back if the write fails)."""
        try:
            files.unlink_beneath(self.folder, os.path.basename(self.path))
        except OSError:
            pass  # a folder: the write fails, and the run paces alone

    def _broken(self, why: str) -> dict[str, Any]:
        self._rewrite = True
        self.warn(f"the forges' pacing state {escape_controls(self.path)} is {why}: ignored, the budget of "
                  f"{escape_controls(self.host)} starts afresh")
        return _fresh()


# --- the state ------------------------------------------------------------------------------
# In memory: {"counts": {rate key: {bucket: requests ended in it}}, "pending": {ticket: [start, deadline,
# writes]}, "block": epoch seconds, "remaining": [requests, reset] | None}.


def _fresh() -> dict[str, Any]:
    return {"counts": {}, "pending": {}, "block": 0.0, "remaining": None}


def _rate_of(key: str) -> Rate:
    """The rate a state's key names (checked: a file's key is read as untrusted)."""
    found = _KEY.fullmatch(key)
    if found is None or not (0 < int(found.group(2)) <= MAX_REQUESTS
                             and MIN_SECONDS <= float(found.group(3)) <= MAX_SECONDS):
        raise _Broken(f"not a krm-merge pacing state (a rate named {escape_controls(repr(key[:40]))})")
    return Rate(int(found.group(2)), float(found.group(3)), found.group(1) == "writes")


def _width(rate: Rate) -> float:
    return rate.seconds / BUCKETS


def _counted(state: dict[str, Any], rate: Rate, now: float) -> Iterator[tuple[float, int]]:
    """Each place of ``rate`` counted at ``now`` with the time it stops counting, in buckets (time, requests):
    the requests ended within the window (a bucket counts while any instant of it does), the ones in flight (as
    if they ended now: the least they will count)."""
    width = _width(rate)
    for bucket, n in state["counts"].get(rate.key, {}).items():
        if (bucket + 1) * width > now - rate.seconds:
            yield (bucket + 1) * width + rate.seconds, n
    flight = sum(1 for entry in state["pending"].values() if entry[2] or not rate.writes)
    if flight:
        yield (math.floor(now / width) + 1) * width + rate.seconds, flight


def _wait(state: dict[str, Any], rates: tuple[Rate, ...], writes: bool, now: float) -> tuple[float, str]:
    """Seconds before a request (content-creating with ``writes``) may go, and what asks them (0: now)."""
    waits: list[tuple[float, str]] = []
    if state["block"] > now:
        waits.append((state["block"] - now, "the wait it asked for (Retry-After)"))
    remaining = state["remaining"]
    if remaining is not None and remaining[0] <= 0 and remaining[1] > now:
        waits.append((remaining[1] - now, "its rate-limit headers: no request left until the reset"))
    for rate in rates:
        if rate.writes and not writes:
            continue
        places = sorted(_counted(state, rate, now))
        over = sum(n for _, n in places) + 1 - rate.requests  # places that must stop counting first
        if over <= 0:
            continue
        for ends, n in places:  # the earliest time enough places have stopped counting
            over -= n
            if over <= 0:
                waits.append((ends - now, f"{rate.words()}, {BUDGET_ENV}"))
                break
    if not waits:
        return 0.0, ""
    wait, why = max(waits)
    return max(wait, 0.001), why


def _count(state: dict[str, Any], rates: tuple[Rate, ...], writes: bool, ended: float) -> None:
    """One request ended at ``ended``: counted in each rate that counts it (this run's and the file's others)."""
    keys = {rate.key: rate for rate in rates}
    for key in state["counts"]:
        keys.setdefault(key, _rate_of(key))
    for key, rate in keys.items():
        if rate.writes and not writes:
            continue
        buckets = state["counts"].setdefault(key, {})
        bucket = math.floor(ended / _width(rate))
        buckets[bucket] = buckets.get(bucket, 0) + 1


def _take_remaining(state: dict[str, Any], remaining: tuple[int, float], now: float) -> None:
    """What the forge's headers say: a later reset starts afresh; the same one keeps the lower count."""
    left, reset = remaining
    if not (now < reset <= LATEST):
        return
    reset = min(reset, now + MAX_AHEAD)
    current = state["remaining"]
    if current is None or reset > current[1] + 1:
        state["remaining"] = [left, reset]
    elif reset >= current[1] - 1:
        current[0] = min(current[0], left)


def _prune(state: dict[str, Any], rates: tuple[Rate, ...], now: float) -> None:
    """What no longer counts dropped (and times further ahead than they can be: a clock set back, a hand edit); a
    place whose process died before it settled counts as a request that ended at its deadline (in ``rates``, and
    the file's others)."""
    for ticket, (start, deadline, writes) in list(state["pending"].items()):
        if deadline <= now or start > now + MAX_AHEAD:
            del state["pending"][ticket]
            if start <= now:  # its process died: it counts as ended at its deadline
                _count(state, rates, bool(writes), deadline)
        else:
            state["pending"][ticket][1] = min(deadline, now + MAX_AHEAD)
    for key, buckets in list(state["counts"].items()):
        rate = _rate_of(key)
        width = _width(rate)
        for bucket in [b for b in buckets if (b + 1) * width <= now - rate.seconds or b * width > now + rate.seconds]:
            del buckets[bucket]
        if not buckets:
            del state["counts"][key]
    if state["block"] <= now:
        state["block"] = 0.0
    state["block"] = min(state["block"], now + MAX_AHEAD)
    remaining = state["remaining"]
    if remaining is not None:
        if remaining[1] <= now:
            state["remaining"] = None
        else:
            remaining[1] = min(remaining[1], now + MAX_AHEAD)


def _dumped(state: dict[str, Any], host: str) -> str:
    return json.dumps({
        "version": 1, "host": host,
        "counts": {key: sorted([b, n] for b, n in buckets.items()) for key, buckets in state["counts"].items()},
        "pending": [[ticket, round(start, 3), round(deadline, 3), int(bool(writes))]
                    for ticket, (start, deadline, writes) in state["pending"].items()],
        "block": round(state["block"], 3),
        "remaining": state["remaining"] and [state["remaining"][0], round(state["remaining"][1], 3)],
    }, sort_keys=True, separators=(",", ":")) + "\n"


def _parsed(raw: bytes) -> dict[str, Any]:
    """The state a file holds, every field checked; :class:`_Broken` saying what is wrong otherwise."""
    if len(raw) > MAX_STATE:
        raise _Broken(f"larger than {MAX_STATE:,} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _Broken("not JSON") from None
    if not isinstance(data, dict) or set(data) != {"version", "host", "counts", "pending", "block", "remaining"} \
            or data["version"] != 1 or type(data["version"]) is not int:
        raise _Broken("not a krm-merge pacing state (version 1)")
    counts = data["counts"]
    if not isinstance(counts, dict) or len(counts) > MAX_RATES:
        raise _Broken(f"not a krm-merge pacing state (counts: up to {MAX_RATES} rates)")
    state = _fresh()
    for key, buckets in counts.items():
        _rate_of(key)
        if not isinstance(buckets, list) or len(buckets) > MAX_BUCKETS:
            raise _Broken(f"not a krm-merge pacing state (counts.{key}: up to {MAX_BUCKETS} buckets)")
        kept: dict[int, int] = {}
        for entry in buckets:
            if not (isinstance(entry, list) and len(entry) == 2 and _whole(entry[0], 0, 2**53)
                    and _whole(entry[1], 1, MAX_COUNT) and entry[0] not in kept):
                raise _Broken(f"not a krm-merge pacing state (counts.{key}: [bucket, requests] pairs)")
            kept[entry[0]] = entry[1]
        state["counts"][key] = kept
    pending = data["pending"]
    if not isinstance(pending, list) or len(pending) > MAX_PENDING:
        raise _Broken(f"not a krm-merge pacing state (pending: up to {MAX_PENDING} requests)")
    for entry in pending:
        if not (isinstance(entry, list) and len(entry) == 4 and isinstance(entry[0], str)
                and _HEX.fullmatch(entry[0]) and _time(entry[1]) and _time(entry[2]) and entry[1] <= entry[2]
                and entry[3] in (0, 1) and type(entry[3]) is int and entry[0] not in state["pending"]):
            raise _Broken("not a krm-merge pacing state (pending: [id, start, deadline, writes] entries)")
        state["pending"][entry[0]] = [float(entry[1]), float(entry[2]), bool(entry[3])]
    if not _time(data["block"]):
        raise _Broken("not a krm-merge pacing state (block: a time)")
    state["block"] = float(data["block"])
    remaining = data["remaining"]
    if remaining is not None:
        if not (isinstance(remaining, list) and len(remaining) == 2 and _whole(remaining[0], 0, MAX_COUNT)
                and _time(remaining[1])):
            raise _Broken("not a krm-merge pacing state (remaining: [requests, reset])")
        state["remaining"] = [remaining[0], float(remaining[1])]
    if not isinstance(data["host"], str):
        raise _Broken("not a krm-merge pacing state (host)")
    return state


def _whole(value: Any, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


def _time(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value) and 0 <= value <= LATEST


def _number(seconds: float) -> str:
    """A window's seconds as the state's keys and messages write them: ``60``, ``6``, ``1.5``."""
    seconds = round(seconds, 3)
    return str(int(seconds)) if seconds == int(seconds) else f"{seconds:.3f}".rstrip("0").rstrip(".")


__all__ = ["BUDGET_ENV", "DEFAULT_BUDGETS", "Pacer", "Rate", "Tally", "WRITES", "budget_from", "default_budget"]
