"""Kpt's Kptfile rules, as kpt keeps them in ``kptfileutil``: one module per concern.

:mod:`.document` (what a Kptfile is to an update: recognised, default,
strategy, render status), :mod:`.upstream` (``upstream``/``upstreamLock``
read, checked and recorded), :mod:`.merge` and :mod:`.functions` (the 3-way
pipeline merge), :mod:`.comments` (its comment surgery).  Nothing is
imported here: a no-op update reads :mod:`.upstream` without the merge's
ruamel.
"""
