"""Text-level core of the ``promote`` mode.

Promotion rewrites scalars found by comment markers (``$promotion``, Flux ``$imagepolicy``)
or by a path/label strategy, editing only the bytes of the marked scalar.  Nothing in this
package imports ruamel.yaml: the standalone ``krm-merge promote`` command must start fast.
"""
