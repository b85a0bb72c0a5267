"""stoker's messages that are not errors go to Python's ``logging``, logger ``"stoker"``: a file
skipped or replaced by ``on_error`` (WARNING), nvJPEG's failed allocations (WARNING), and the
traces that STOKER_TRACE_STAGES / STOKER_TRACE_MIXED / STOKER_TRACE_MIXED_EVERY ask for (DEBUG).
The C++ core hands them to the sink ``stoker._C`` installs at import (``src/core/log.h``); with
no Python around they are printed to stderr.

stoker adds no handler of its own: where the program has not configured logging, Python prints
warnings to stderr as before. Only when a STOKER_TRACE_* variable is set and nothing is
configured does stoker add a stderr handler, so that the traces asked for are seen.
"""
import logging
import os

logger = logging.getLogger("stoker")

TRACE_VARIABLES = ("STOKER_TRACE_STAGES", "STOKER_TRACE_MIXED", "STOKER_TRACE_MIXED_EVERY")


def show_traces(environ=None):
    """Lets the traces a STOKER_TRACE_* variable asks for through (the core reads them once set,
    whatever their value)."""
    environ = os.environ if environ is None else environ
    if not any(v in environ for v in TRACE_VARIABLES):
        return
    if logger.level == logging.NOTSET or logger.level > logging.DEBUG:
        logger.setLevel(logging.DEBUG)
    if not logger.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
