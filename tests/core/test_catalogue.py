"""The catalogue of bad inputs (tests/catalogue.py) through the library and the CLI: each case refused with
its message, reported row by row, or read whole."""

from __future__ import annotations

import io

import pytest

from cophe_core import InputError, score_files
from cophe_core.cli import main
from cophe_core.inputs.readers import Reason
from cophe_core.ontology.custom import load_hierarchy
from tests.catalogue import CASES, THRESHOLD


def _stream(name: str, data: bytes) -> io.BytesIO:
    f = io.BytesIO(data)
    f.name = name
    return f


def _score(case):
    gold, run, hierarchy = case.files()
    onto = load_hierarchy(hierarchy[1], name=hierarchy[0]) if hierarchy else "auto"
    return score_files(_stream(*gold), {"r": _stream(*run)}, ontology=onto, threshold=THRESHOLD)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_library(case):
    if case.outcome == "refused":
        with pytest.raises(InputError) as e:
            _score(case)
        assert case.said in str(e.value) and len(str(e.value)) < 500
        return
    rejected = _score(case).corpus.rejected
    if case.outcome == "read":
        assert rejected.empty
    else:
        assert rejected.reason.str.contains(case.said, regex=False).any(), rejected.reason
        assert rejected.file.eq(case.name).all() and rejected.line.ge(1).all()
        assert rejected.kind.isin(list(Reason)).all()  # a kind beside every reason
        assert rejected.value.str.len().max() <= 200  # an excerpt, never the whole value


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_cli(case, tmp_path, capsys):
    gold, run, hierarchy = case.files()
    paths = {}
    for role, (name, data) in (
        ("gold", gold),
        ("run", run),
        *((("hierarchy", hierarchy),) if hierarchy else ()),
    ):
        (tmp_path / role).mkdir()
        paths[role] = tmp_path / role / name
        paths[role].write_bytes(data)
    # a catalogue file is a few rows, one of them bad on purpose: far over the default bound of rows not
    # scored (tests/core/test_max_rejected.py), so it is lifted to see how each bad row is reported
    argv = ["score", "--gold", str(paths["gold"]), "--pred", str(paths["run"]), "--max-rejected", "1"]
    if case.role == "run":  # the runs of the catalogue are scores
        argv += ["--threshold", str(THRESHOLD)]
    if hierarchy:
        argv += ["--ontology", str(paths["hierarchy"])]
    status = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err) < 2000, err[:500]
    if case.outcome == "refused":
        assert (
            status == 2 and err.count("\n") == 1 and err.startswith("cophe: error: ") and case.said in err
        ), err
    else:
        assert status == 0, err
        assert (case.said in err) if case.outcome == "reported" else "not scored" not in err, err
