"""gpu-gitops: the command-line edge that joins the renderer and the auditor."""

__version__ = "0.1.0"

__all__ = ["__version__"]
