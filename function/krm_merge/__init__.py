"""krm-merge: a KRM function for safe merges of Kubernetes configuration."""

__version__ = "0.1.0"
