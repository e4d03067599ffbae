"""archmodel: model hardware accelerators and the networks around them, RTL style."""

__version__ = "0.1.0"
"""The version of archmodel: the one place it is written (``pyproject.toml`` reads it from here)."""
