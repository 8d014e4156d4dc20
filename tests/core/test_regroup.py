"""scripts/regroup.py, the table of the subpackages' moves, rewrites code written against the flat layout
(merged in from another branch) and leaves the regrouped code as it is."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from tests.conftest import ROOT

spec = importlib.util.spec_from_file_location("regroup", ROOT / "scripts" / "regroup.py")
assert spec is not None and spec.loader is not None
regroup = importlib.util.module_from_spec(spec)
spec.loader.exec_module(regroup)


def test_the_tree_is_regrouped_already():
    """Nothing is left to move or rewrite: an import of an old path inside the repository fails this."""
    out = subprocess.run(
        [sys.executable, "scripts/regroup.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert (out.returncode, out.stdout.strip()) == (0, "nothing to change")


def test_imports_of_the_flat_layout_are_rewritten():
    old = (
        "from cophe_core.stream import count_partition, score_dataset  # noqa: E402\n"
        "from cophe_core import stats, score_files\n"
        "import cophe_core.aggregate as module\n"
        'monkeypatch.setattr("cophe_core.families.within_family", broken)\n'
        "See :func:`cophe_core.aggregate.read_aggregate` in `cophe_core/stream.py`.\n"
    )
    assert regroup.rewrite_absolute(old) == (
        "from cophe_core.scoring.kernel import count_partition\n"
        "from cophe_core.scale.pipeline import score_dataset  # noqa: E402\n"
        "from cophe_core import score_files\n"
        "from cophe_core.breakdown import stats\n"
        "import cophe_core.scale.aggregate as module\n"
        'monkeypatch.setattr("cophe_core.breakdown.families.within_family", broken)\n'
        "See :func:`cophe_core.scale.aggregate_reader.read_aggregate` in `cophe_core/scale/pipeline.py`.\n"
    )
    assert regroup.rewrite_absolute(regroup.rewrite_absolute(old)) == regroup.rewrite_absolute(old)


def test_a_relative_import_is_read_from_where_the_file_was(tmp_path, monkeypatch):
    """In a moved file, ``from .files import`` meant the flat package's files; in an unmoved one it is
    read from where the file is; an import already right is left alone."""
    path = ROOT / "cophe_core" / "scale" / "cluster.py"
    text = (
        "from .files import InputError\n"
        "from .stream import count_partition, StreamedEvaluation\n"
        "from .pipeline import score_dataset\n"
        "from . import __version__\n"
        "    from .metrics import prf\n"
    )
    monkeypatch.setattr(regroup.Path, "read_text", lambda self: text if self == path else "")
    assert regroup.rewrite_relative(path) == (
        "from ..base.files import InputError\n"
        "from ..scoring.kernel import count_partition\n"
        "from .pipeline import StreamedEvaluation\n"
        "from .pipeline import score_dataset\n"
        "from .. import __version__\n"
        "    from ..metrics import prf\n"
    )
