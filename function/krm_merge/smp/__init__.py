"""Strategic merge patch (Kubernetes ``strategicpatch``) on plain Python data.

Public API:

* :func:`apply_patch` — apply a patch as the API server does;
* :func:`create_two_way_patch`, :func:`create_three_way_patch` — create patches
  as ``CreateTwoWayMergePatch`` / ``CreateThreeWayMergePatch``;
* :func:`apply_desired` — offline client-side ``kubectl apply``;
* :class:`SmpError`, :class:`MissingMergeKeyError`, :class:`ConflictError`.

See ``docs/smp.md`` for the algorithm and the deliberate deviations.
"""

from .apply import apply_patch
from .create import create_three_way_patch, create_two_way_patch
from .errors import ConflictError, MissingMergeKeyError, SmpError
from .kubectl_apply import apply_desired, kubectl_apply_patch

__all__ = [
    "ConflictError",
    "MissingMergeKeyError",
    "SmpError",
    "apply_desired",
    "apply_patch",
    "create_three_way_patch",
    "create_two_way_patch",
    "kubectl_apply_patch",
]
