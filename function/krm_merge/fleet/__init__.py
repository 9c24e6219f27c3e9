"""Fleet update: move every consumer of one upstream package to a new version (issue 36).

``krm-merge update ROOT... --upstream REPO[/DIRECTORY] --ref REF`` selects the
packages (:mod:`.select`), takes this shard's share of them (:mod:`.shard`),
resolves, fetches and extracts each upstream version once for all of them
(:mod:`.versions`), updates each package in a worker process of its own
(:mod:`.run`) through the single package's update, and reports them together
(:mod:`.report`).  The command itself is :mod:`krm_merge.commands.fleet`.
"""
