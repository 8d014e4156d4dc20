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


def test_the_modules_main_gained_and_one_line_scripts_are_rewritten():
    old = (
        'run([python, "-c", "import sys; from cophe_core.stream import resolve_tables, score_dataset; go()"])\n'
        "from cophe_core import comparison, accumulate as acc, score_files\n"
        "from cophe_core.decisions import check_rule\n"
        "x = cophe_core.figures_export.render\n"
    )
    assert regroup.rewrite_absolute(old) == (
        'run([python, "-c", "import sys; from cophe_core.scoring.kernel import resolve_tables; '
        'from cophe_core.scale.pipeline import score_dataset; go()"])\n'
        "from cophe_core import score_files\n"
        "from cophe_core.breakdown import comparison\n"
        "from cophe_core.scale import accumulate as acc\n"
        "from cophe_core.scoring.decisions import check_rule\n"
        "x = cophe_core.output.figures_export.render\n"
    )


def test_a_module_as_it_was_is_read_as_if_moved():
    """The other side of a merge edited stream.py at its old path: its text reads as the moved module's, its
    relative imports from the new place and the private names the split made public under their new names."""
    old = "from .files import InputError\nfrom .stats import bootstrap\n\n\nclass _Spill:\n    x = _strings\n"
    assert regroup.as_moved(old, "stream") == (
        "from ..base.files import InputError\nfrom ..breakdown.stats import bootstrap\n\n\n"
        "class Spill:\n    x = arrow_strings\n"
    )


def test_conflicting_import_blocks_keep_both_sides():
    """One side moved the imports, the other added one: both kept (the rewrite and ruff's sort make one block
    of them); a conflict in code is left for a hand."""
    text = (
        "<<<<<<< HEAD\nfrom ..base.files import InputError\n=======\nfrom .files import InputError, Reason\n"
        ">>>>>>> main\nx = 1\n<<<<<<< HEAD\ny = 2\n=======\ny = 3\n>>>>>>> main\n"
    )
    assert regroup.keep_both_imports(text) == (
        "from ..base.files import InputError\nfrom .files import InputError, Reason\nx = 1\n"
        "<<<<<<< HEAD\ny = 2\n=======\ny = 3\n>>>>>>> main\n"
    )


def test_the_edits_to_a_split_module_land_on_the_piece_holding_their_lines(tmp_path):
    """Each change made where its lines are, in whichever piece; one whose lines no piece holds is handed back."""
    kernel, sources = tmp_path / "kernel.py", tmp_path / "sources.py"
    kernel.write_text(
        "def count():\n    return 1\n\n\ndef table():\n    return 1\n"
    )  # found by what is above
    sources.write_text("def read():\n    return 3\n")
    before = "import os\n\n\ndef count():\n    return 1\n\n\ndef read():\n    return 3\n"
    after = "import os\nimport sys\n\n\ndef count():\n    return 10\n\n\ndef read():\n    return 30\n"
    left = regroup.apply_hunks(regroup.hunks(before, after), [kernel, sources])
    assert kernel.read_text() == "def count():\n    return 10\n\n\ndef table():\n    return 1\n"
    assert sources.read_text() == "def read():\n    return 30\n"
    assert left == ["@@\n import os\n+import sys\n \n \n def count():\n"]  # no piece holds the imports
