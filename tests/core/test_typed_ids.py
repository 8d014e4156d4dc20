"""Integer document ids in typed files (Parquet, Feather, JSON lines) with one id missing: pandas reads such a
column as floats, and the ids must still be the integers they are (``1``, not ``1.0``), or a perfect run matches
no document of the gold standard. The row without an id is listed as rejected, never dropped."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

from cophe_core import score_files
from cophe_core.scale.pipeline import score_dataset

GOLD = {"doc_id": [101, 102, None, 103], "code": ["401.9", "428.0", "250.00", "038.9"]}
RUN = {"doc_id": [101, 102, 103], "code": ["401.9", "428.0", "038.9"]}


def _write(folder, name: str, rows: dict, fmt: str):
    table = pa.table({"doc_id": pa.array(rows["doc_id"], pa.int64()), "code": rows["code"]})
    path = folder / f"{name}.{fmt}"
    if fmt == "parquet":
        pq.write_table(table, path)
    elif fmt == "feather":
        feather.write_feather(table, path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in table.to_pylist()))
    return path


@pytest.mark.parametrize("fmt", ["parquet", "feather", "jsonl"])
def test_a_perfect_run_is_perfect_when_the_gold_misses_one_id(tmp_path, fmt):
    gold, run = _write(tmp_path, "gold", GOLD, fmt), _write(tmp_path, "run", RUN, fmt)
    scoring = score_files(gold, {"run": run})
    table = scoring.evaluation("run").levels_table.set_index(["measure", "level"])
    assert table.loc[("flat", "leaf"), ["tp", "fp", "fn"]].tolist() == [3, 0, 0]
    assert sorted(scoring.corpus.docs) == ["101", "102", "103"]
    rejected = scoring.not_scored().rejected
    assert len(rejected) == 1 and rejected.iloc[0]["line"] == 3  # the record without an id


def test_the_streamed_path_reads_the_same_ids(tmp_path):
    gold, run = _write(tmp_path, "gold", GOLD, "parquet"), _write(tmp_path, "run", RUN, "parquet")
    streamed = score_dataset(str(gold), str(run))
    whole = score_files(gold, {"run": run}).evaluation("run")
    assert streamed.levels_table.equals(whole.levels_table)
    assert streamed.levels_table.set_index(["measure", "level"]).loc[("flat", "leaf"), "tp"] == 3
