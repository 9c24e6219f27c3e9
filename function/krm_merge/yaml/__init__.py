"""YAML knowledge of krm-merge, below every other layer.

``scalars`` holds the scalar rules (types, plain-safety, quoting, escaping);
``load`` the one bounded loader every YAML read goes through.
"""
