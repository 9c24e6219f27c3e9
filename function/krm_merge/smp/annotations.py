"""Annotation names of client-side ``kubectl apply`` (one home for the public constant and the engine)."""

LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
