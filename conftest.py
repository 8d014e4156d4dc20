"""Collection for the whole tree: modules of optional extras that are not installed are not collected (their
doctests import them), and their tests skip themselves."""

import importlib.util

collect_ignore = (
    [] if importlib.util.find_spec("torchmetrics") else ["cophe_core/integrations/torchmetrics.py"]
)


def pytest_configure(config) -> None:
    """Tests never read or write the user's cache of built code systems (cophe_core.ontology.cache): each
    session (each xdist worker) gets an empty temporary folder, removed at the end."""
    import os
    import tempfile

    config._cophe_cache = tempfile.TemporaryDirectory(prefix="cophe-test-cache-")
    os.environ["COPHE_CACHE_DIR"] = config._cophe_cache.name


def pytest_unconfigure(config) -> None:
    cache = getattr(config, "_cophe_cache", None)
    if cache is not None:
        cache.cleanup()
