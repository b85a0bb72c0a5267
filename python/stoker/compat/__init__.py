"""Helpers for running code written for other libraries on stoker: ``stoker.compat.dali``."""
