"""The git side of a finished change: a branch, one commit, a push with a lease, a pull request.

``krm-merge promote --pull-request`` and ``krm-merge update --pull-request`` plan
their change as usual; this package then puts it up for review:

* :mod:`krm_merge.change.worktree` checks the work tree before anything is written
  (a git work tree, no uncommitted changes to the files the command will write);
* :mod:`krm_merge.change.remote` asks the remote for its default branch and the
  branches involved (``git ls-remote``) and reads the repository from its URL;
* :mod:`krm_merge.change.commit` builds one commit on the base branch's tip holding
  exactly the files the command changed (a private index, ``git commit-tree``: the
  user's author and signing configuration apply) and moves the local branch;
* :mod:`krm_merge.change.push` pushes that branch only, with a lease;
* :mod:`krm_merge.change.forges` opens or updates the pull request on the forge;
* :mod:`krm_merge.change.publish` runs those steps in order.

Every git command is the user's ``git`` (:mod:`krm_merge.change.gitrun`), so their
credential helpers, SSH agent, hooks and signing keys apply; krm-merge holds no
credential of its own except the forge token, which :mod:`krm_merge.change.redact`
keeps out of every message.
"""
