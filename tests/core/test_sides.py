"""Each input read on its own evidence (issue 24, point 3): an undotted run (MIMIC's ``4019``) beside a dotted
gold standard makes none of the gold standard's bare categories (``684``) ambiguous, in memory, streamed, on
Dask and on the command line, and the paths keep giving the same figures.

The hand-worked case, ICD-9, system "auto":

- gold (dotted): document 1 has 401.9 and 684 (Impetigo, a billable category), document 2 has 250.00. Read
  alone, nothing in it is undotted: every row is placed, on the listed nodes of those codes.
- run (undotted: 4019 and 6840 have four digits): document 1 has 4019 (401.9 or procedure 40.19) and 6840
  (684.0 or 68.40), document 2 has 25000 (five digits: only diagnosis 250.00) and 684 (among undotted codes,
  diagnosis 684 or procedure 68.4). So 4019, 6840 and 684 are ambiguous, and 25000 is 250.00.

Scored anyway, the run predicts {} for document 1 and {250.00} for document 2: at the leaves TP 1, FP 0,
FN 2 (401.9, 684), so flat precision 1, recall 1/3, F1 2·(1·1/3)/(1 + 1/3) = 0.5. The old reading (one
evidence for all the inputs) also rejected the gold standard's 684, and refused the gold standard.
"""

from __future__ import annotations

import json
from pathlib import Path

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from cophe_core.api import score_files
from cophe_core.base.files import Reason
from cophe_core.cli import main
from cophe_core.ontology import icd9_ontology
from cophe_core.ontology.systems import resolve_inputs
from cophe_core.scale.cluster import score_dask
from cophe_core.scale.pipeline import score_dataset
from cophe_core.scoring.kernel import resolve_tables
from cophe_core.scoring.labels import RowBound, TooManyRejected
from tests.core.test_stream import ICD9, assert_same, sorted_rows

GOLD = "doc_id,code\n1,401.9\n1,684\n2,250.00\n"
RUN = "doc_id,code\n1,4019\n1,6840\n2,25000\n2,684\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "gold.csv").write_text(GOLD)
    (tmp_path / "run.csv").write_text(RUN)
    return tmp_path / "gold.csv", tmp_path / "run.csv"


def test_each_input_is_read_on_its_own_evidence():
    onto = icd9_ontology()
    gold, run = resolve_inputs(
        [np.array(["250.00", "401.9", "684"]), np.array(["25000", "4019", "684", "6840"])], onto
    )
    assert gold.nodes.tolist() == [onto.codes["250.00"], onto.codes["401.9"], onto.codes["684"]]
    assert gold.reasons == {}
    assert run.nodes.tolist() == [onto.codes["250.00"], -1, -1, -1]
    assert {i: kind for i, (kind, _) in run.reasons.items()} == {
        1: Reason.AMBIGUOUS,
        2: Reason.AMBIGUOUS,
        3: Reason.AMBIGUOUS,
    }
    assert "procedure 68.4" in run.reasons[2][1]
    assert gold.ontology is run.ontology and gold.ontology.n_nodes == onto.n_nodes  # nothing unlisted placed
    # the streamed and Dask paths' tables read them the same way
    g, r = resolve_tables([["401.9", "684", "250.00"], ["4019", "6840", "25000", "684"]], onto)
    assert g.codes.tolist() == ["250.00", "401.9", "684"] and (g.nodes == gold.nodes).all()
    assert r.codes.tolist() == ["25000", "4019", "684", "6840"] and (r.nodes == run.nodes).all()


def test_the_gold_standard_keeps_its_categories_beside_an_undotted_run(files):
    gold, run = files
    with pytest.raises(TooManyRejected) as refused:  # the run alone is the question, never the gold
        score_files(gold, {"run": run}, bound=RowBound())
    assert [e.file for e in refused.value.each] == ["run.csv"] and refused.value.needs_system
    s = score_files(gold, {"run": run}, bound=RowBound.lifted(1.0))
    rows = s.corpus.file_rows
    assert (rows[""].rejected, rows["run"].rejected, rows["run"].undotted) == (0, 3, 3)
    assert sorted(s.corpus.rejected.value) == ["4019", "684", "6840"]
    flat = s.evaluation("run").score("flat", "leaf")
    assert (flat.tp, flat.fp, flat.fn) == (1, 0, 2)
    assert flat.precision == 1.0 and flat.recall == pytest.approx(1 / 3) and flat.f1 == pytest.approx(0.5)


def test_an_undotted_run_does_not_block_the_dotted_gold_and_runs_beside_it(tmp_path):
    """The bundled sample: a run with its dots removed is refused on its own question (which system), and
    the gold standard and the good run are scored as if it had not been given."""
    gold, good = ICD9 / "gold.csv", ICD9 / "run_siblings.csv"
    frame = pd.read_csv(ICD9 / "run_overcoder.csv", dtype=str)
    frame["code"] = frame["code"].str.replace(".", "", regex=False)
    bad = tmp_path / "run_overcoder.csv"
    frame.to_csv(bad, index=False)
    both = score_files(gold, {"good": good, "undotted": bad}, bound=RowBound())
    assert both.run_names == ["good"] and list(both.refused) == ["undotted"]
    assert both.refused["undotted"].needs_system
    alone = score_files(gold, {"good": good})
    assert both.evaluation("good").to_dict() == alone.evaluation("good").to_dict()
    lifted = score_files(gold, {"good": good, "undotted": bad}, bound=RowBound.lifted(1.0))
    assert set(lifted.corpus.rejected.file) == {"run_overcoder.csv"}  # the gold loses no row to it
    assert lifted.evaluation("good").to_dict() == alone.evaluation("good").to_dict()


def test_streamed_and_dask_read_each_side_as_in_memory(files):
    gold, run = files
    s = score_files(gold, {"run": run}, bound=RowBound.lifted(1.0))
    ev = s.evaluation("run")
    for chunk in (1, 3, 100):
        sv = score_dataset(gold, run, chunk_rows=chunk, bound=RowBound.lifted(1.0))
        assert_same(ev, sv)
        pd.testing.assert_frame_equal(sorted_rows(sv.rejected), sorted_rows(s.corpus.rejected))
    with pytest.raises(TooManyRejected) as refused:
        score_dataset(gold, run, chunk_rows=2, bound=RowBound())
    assert [e.file for e in refused.value.each] == ["run.csv"]
    frames = [dd.from_pandas(pd.read_csv(f, dtype=str), npartitions=2) for f in (gold, run)]
    dv = score_dask(*frames)
    assert_same(ev, dv)
    assert sorted(dv.rejected.value) == ["4019", "684", "6840"]


def test_the_command_line_scores_the_dotted_gold_beside_an_undotted_run(files, capsys):
    gold, run = files
    # without a choice, the run's undotted codes are its question alone: the gold standard is not named
    assert main(["score", "--gold", str(gold), "--pred", str(run)]) == 2
    err = capsys.readouterr().err
    assert "run.csv: 3 of its 4 rows" in err and "--system diagnosis" in err and "gold.csv" not in err
    # scoring the run's other rows anyway, without --system: the gold standard loses none of its rows
    assert (
        main(["score", "--gold", str(gold), "--pred", str(run), "--format", "json", "--max-rejected", "0.75"])
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["rows"]["gold.csv"] == {"given": 3, "scored": 3, "rejected": 0, "duplicates": 0}
    assert out["rows"]["run.csv"]["rejected"] == 3
    # an undotted run whose codes are unambiguous (five digits, V codes) needs no --system either
    (run.parent / "clear.csv").write_text("doc_id,code\n1,40190\n1,684\n2,25000\n2,V4581\n")
    assert main(["score", "--gold", str(gold), "--pred", str(run.parent / "clear.csv")]) == 0
