"""Import scipy.sparse without the numpy tools it never uses (issue 28: a lean start).

SciPy's array-API layer (``scipy._lib.array_api_compat.numpy``, imported by ``scipy.sparse`` since SciPy 1.15)
copies numpy's namespace with ``from numpy import *`` and a ``getattr`` of every name ``dir(numpy)`` lists.
numpy loads some submodules lazily, on first access, so that copy imports ``numpy.f2py`` (the Fortran wrapper
generator, with its regular expressions and ``charset_normalizer``), ``numpy.testing`` (``unittest``,
``importlib.metadata``) and ``numpy.ctypeslib``: about 40-60 ms of a 0.7 s ``cophe score``, more than all of
cophe's own work on 3,000 documents outside reading and scoring. Neither sparse matrices nor cophe use them.

:func:`import_scipy_sparse`, run when this module is imported (``cophe_core/__init__.py`` imports it first,
before any module of the core imports scipy.sparse), imports scipy.sparse once with those three names hidden from numpy's ``__all__``
and ``__dir__``, and puts both back as they were, whatever happens. numpy itself is untouched: ``numpy.testing``
and the others still import on first use, as before. If scipy.sparse is already imported, it does nothing.
"""

from __future__ import annotations

import sys

__all__ = ["UNUSED", "import_scipy_sparse"]

# numpy's lazily imported submodules that SciPy's copy of the namespace would import for nothing.
UNUSED = frozenset({"f2py", "testing", "ctypeslib"})


def import_scipy_sparse() -> None:
    """Import ``scipy.sparse`` (once per process) without numpy's :data:`UNUSED` submodules.

    >>> import numpy
    >>> names = (sorted(numpy.__all__), dir(numpy))
    >>> import_scipy_sparse()
    >>> import scipy.sparse
    >>> (sorted(numpy.__all__), dir(numpy)) == names  # numpy's namespace as it was
    True
    >>> int(scipy.sparse.csr_matrix([[1, 0], [1, 1]]).sum())
    3
    """
    if "scipy.sparse" in sys.modules:
        return
    import numpy as np

    namespace = vars(np)  # the module's own names: its __all__, and the __dir__ that dir(numpy) calls
    all_names, listed = namespace.get("__all__"), namespace.get("__dir__")
    if isinstance(all_names, list):
        namespace["__all__"] = [n for n in all_names if n not in UNUSED]
    if callable(listed):
        namespace["__dir__"] = lambda: [n for n in listed() if n not in UNUSED]
    try:
        import scipy.sparse  # noqa: F401 - imported for its side effect: cached in sys.modules
    finally:  # numpy's namespace as it was, even if the import failed
        if isinstance(all_names, list):
            namespace["__all__"] = all_names
        if callable(listed):
            namespace["__dir__"] = listed


import_scipy_sparse()  # on import: cophe_core/__init__.py imports this module before any other of the core
