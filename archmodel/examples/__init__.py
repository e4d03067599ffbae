"""Runnable systems written as Python builders (``archmodel run archmodel.examples.NAME:build``)."""
