"""Fails the build (a warning, and the build runs with -W) when a public name of hprofkit,
one in ``hprofkit.__all__``, has no entry in the API reference: a new name lands with its page."""

from __future__ import annotations

from sphinx.util import logging

import hprofkit

logger = logging.getLogger(__name__)


def check(app, env) -> None:
    documented = set(env.get_domain("py").objects)
    for name in hprofkit.__all__:
        if f"hprofkit.{name}" not in documented:
            logger.warning("hprofkit.%s is public (hprofkit.__all__) but not in docs/reference/api.md", name)


def setup(app):
    app.connect("env-check-consistency", check)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
