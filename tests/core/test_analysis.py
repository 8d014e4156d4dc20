"""Saved analyses: round trips, determinism, every refusal (not a zip, a bomb, a path outside, a missing or
altered input, a bad manifest, bad rules), and the CLI's --save opened and re-scored."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cophe_core import InputError, score_files
from cophe_core.analysis import Analysis, InputFile, read_analysis, write_analysis
from cophe_core.cli import main
from tests.conftest import SAMPLE

GOLD = InputFile("gold.csv", b"doc_id,code\n1,401.9\n")


def analysis(**kw) -> Analysis:
    base = {"gold": GOLD, "runs": {"A": InputFile("a.parquet", b"PAR1\x00\x01"), "B b": InputFile("../b.csv", b"x")},
            "options": {"ontology": "icd9", "system": "auto", "doc_col": None, "code_col": None, "max_level": "e0"},
            "rule": ("top_k", 5), "slice": {"slice_dimension": "code_frequency", "slice_edges": "5, 50"},
            "view": {"page": "tree", "focus": "428"}, "created": "2026-11-22T10:00:00+00:00",
            "cophe_version": "0.1.0", "code_sets": {"ICD-9-CM": "CMS v32"},
            "metadata": InputFile("documents.csv", b"doc_id,length\n1,20\n")}
    return Analysis(**{**base, **kw})


def test_round_trip_keeps_every_byte_and_setting():
    a = analysis()
    back = read_analysis(write_analysis(a))
    assert back == a
    assert back.runs["B b"].name == "../b.csv"  # the name as given; the member path is made safe
    names = zipfile.ZipFile(io.BytesIO(write_analysis(a))).namelist()
    assert names[0] == "manifest.json" and all(".." not in n for n in names)


def test_the_same_analysis_gives_the_same_bytes():
    assert write_analysis(analysis()) == write_analysis(analysis())


@settings(max_examples=40, deadline=None)
@given(names=st.lists(st.text(min_size=1, max_size=20).filter(str.strip), min_size=1, max_size=4, unique=True),
       payload=st.binary(max_size=200), threshold=st.floats(0, 1))
def test_round_trip_of_any_names_and_bytes(names, payload, threshold):
    a = analysis(runs={n: InputFile(n + ".csv", payload + n.encode()) for n in names}, rule=("threshold", threshold))
    assert read_analysis(write_analysis(a)) == a


def zipped(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for k, v in members.items():
            z.writestr(k, v)
    return out.getvalue()


def members_of(a: Analysis) -> dict[str, bytes]:
    z = zipfile.ZipFile(io.BytesIO(write_analysis(a)))
    return {n: z.read(n) for n in z.namelist()}


def with_manifest(change) -> bytes:
    m = members_of(analysis())
    manifest = json.loads(m["manifest.json"])
    change(manifest)
    m["manifest.json"] = json.dumps(manifest).encode()
    return zipped(m)


@pytest.mark.parametrize("content, message", [
    (b"doc_id,code\n1,401.9\n", "not a cophe analysis file"),
    (zipped({"notes.txt": b"hello"}), "no manifest.json"),
    (zipped({"manifest.json": b"{not json"}), "not valid JSON"),
    (zipped({"manifest.json": b"[" * 100_000 + b"]" * 100_000}), "not valid JSON|does not describe"),
    (zipped({"manifest.json": b'{"format": "other"}'}), "does not describe a cophe analysis"),
    (with_manifest(lambda m: m.update(format_version=99)), "format version 99"),
    (with_manifest(lambda m: m.update(rule=["threshold", 1.5])), "threshold must be a number from 0 to 1"),
    (with_manifest(lambda m: m.update(rule=["threshold", "nan"])), "threshold must be a number"),
    (with_manifest(lambda m: m.update(rule=["top_k", 0])), "top_k must be a whole number"),
    (with_manifest(lambda m: m.update(rule=["eval", "1"])), "decision rule must be"),
    (with_manifest(lambda m: m["inputs"][1].update(sha256="0" * 64)), "does not match its SHA-256"),
    (with_manifest(lambda m: m["inputs"][1].update(member="inputs/gone.csv")), "listed in manifest.json but missing"),
    (with_manifest(lambda m: m["inputs"][2].update(run=m["inputs"][1]["run"])), "a name of its own"),
    (with_manifest(lambda m: m.update(inputs=[m["inputs"][0]])), "at least one run"),
    (with_manifest(lambda m: m.update(view=[1, 2])), "view must be an object"),
    (zipped({"../../etc/passwd": b"x", **members_of(analysis())}), "path outside the archive"),
    (zipped({"/abs.csv": b"x", **members_of(analysis())}), "path outside the archive"),
    (zipped({f"m{i}": b"" for i in range(70)}), "members"),
])
def test_bad_files_are_refused_with_the_file_named(content, message):
    with pytest.raises(InputError, match=r"^shared\.cophe: .*(" + message + ")"):
        read_analysis(content, name="shared.cophe")


def test_a_member_that_inflates_beyond_the_bound_is_refused():
    m = members_of(analysis(runs={"A": InputFile("a.csv", b"0" * 2_000_000)}))
    bomb = zipped(m)
    assert len(bomb) < 50_000  # 2 MB of zeros compress to a few kB
    with pytest.raises(InputError, match="inflate"):
        read_analysis(bomb, name="shared.cophe", max_bytes=1_000_000)
    # a header that understates the size does not help: the read itself is bounded
    raw = bytearray(bomb)
    with pytest.raises(InputError):
        read_analysis(bytes(raw).replace(b"\x80\x84\x1e\x00", b"\x10\x00\x00\x00"), name="shared.cophe",
                      max_bytes=1_000_000)


def test_cli_save_opens_and_scores_the_same(tmp_path, capsys):
    out = tmp_path / "run.cophe"
    assert main(["score", "--gold", str(SAMPLE / "gold.csv"), "--pred", str(SAMPLE / "scores_model.csv"),
                 "--threshold", "0.4", "--format", "json", "--save", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    a = read_analysis(out.read_bytes(), name=out.name)
    assert a.rule == ("threshold", 0.4) and list(a.runs) == ["scores_model"]
    assert a.gold.data == (SAMPLE / "gold.csv").read_bytes()
    assert hashlib.sha256(a.runs["scores_model"].data).hexdigest() == \
        hashlib.sha256((SAMPLE / "scores_model.csv").read_bytes()).hexdigest()
    assert a.code_sets == printed["code_sets"]
    again = score_files(a.gold.data, {k: f.data for k, f in a.runs.items()}, ontology=a.options["ontology"],
                        threshold=a.rule[1])
    assert again.evaluation("scores_model").score("cophe")["f1"] == pytest.approx(printed["cophe"]["overall"]["f1"])


def test_cli_save_into_a_missing_folder_exits_2(tmp_path, capsys):
    code = main(["score", "--gold", str(SAMPLE / "gold.csv"), "--pred", str(SAMPLE / "run_siblings.csv"),
                 "--save", str(tmp_path / "missing" / "a.cophe")])
    err = capsys.readouterr().err
    assert code == 2 and "--save" in err and "Traceback" not in err


def test_cli_csv_exports_defuse_formulas(tmp_path):
    gold = tmp_path / "gold.csv"
    gold.write_text("doc_id,code\n=cmd|' /C calc'!A0,401.9\n@SUM(1),428.0\n")
    pred = tmp_path / "pred.csv"
    pred.write_text("doc_id,code\n=cmd|' /C calc'!A0,401.9\n+1,=HYPERLINK(x)\n")
    rejected, docs = tmp_path / "rejected.csv", tmp_path / "documents.csv"
    assert main(["score", "--gold", str(gold), "--pred", str(pred), "--ontology", "icd9",
                 "--rejected", str(rejected), "--documents", str(docs)]) == 0
    import pandas as pd

    for path in (rejected, docs):
        cells = pd.read_csv(path, dtype=str, keep_default_na=False).to_numpy().ravel()
        assert not [c for c in cells if c[:1] in ("=", "+", "@")], path
    assert "'=cmd|' /C calc'!A0" in docs.read_text() and "'=HYPERLINK(x)" in rejected.read_text()
