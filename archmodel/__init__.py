"""archmodel: model hardware accelerators and the networks around them, RTL style."""

__version__ = "0.1.0"
