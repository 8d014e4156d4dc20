"""Saved analyses: round trips, determinism, every refusal (not a zip, a bomb, a path outside, a missing or
altered input, a bad manifest, bad options and rules), damaged files, and the CLI's --save opened and re-scored."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
import zlib
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cophe_core import InputError, score_files
from cophe_core.cli import main
from cophe_core.inputs.archive import read_member, write_zip, zip_member
from cophe_core.output.analysis import (
    MAX_MANIFEST,
    ONTOLOGIES,
    SYSTEMS,
    Analysis,
    InputFile,
    analysis_checksum,
    analysis_from_files,
    read_analysis,
    score_analysis,
    write_analysis,
)
from cophe_core.output.manifest import BUILT_IN_LEVELS, is_level_of
from tests.conftest import SAMPLE, examples

GOLD = InputFile("gold.csv", b"doc_id,code\n1,401.9\n")


def analysis(**kw) -> Analysis:
    base = {
        "gold": GOLD,
        "runs": {"A": InputFile("a.parquet", b"PAR1\x00\x01"), "B b": InputFile("../b.csv", b"x")},
        "options": {
            "ontology": "icd9",
            "system": "auto",
            "doc_col": None,
            "code_col": None,
            "max_level": "e0",
        },
        "rule": ("top_k", 5),
        "slice": {"slice_dimension": "code_frequency", "slice_edges": "5, 50"},
        "view": {"page": "tree", "focus": "428"},
        "created": "2026-11-22T10:00:00+00:00",
        "cophe_version": "0.1.0",
        "code_sets": {"ICD-9-CM": "CMS v32"},
        "metadata": InputFile("documents.csv", b"doc_id,length\n1,20\n"),
        "training": InputFile("train.jsonl", b'{"doc_id": "1", "codes": ["401.9"]}\n'),
    }
    return Analysis(**{**base, **kw})


def test_round_trip_keeps_every_byte_and_setting():
    a = analysis()
    back = read_analysis(write_analysis(a))
    assert back == a
    assert back.runs["B b"].name == "../b.csv"  # the name as given; the member path is made safe
    assert list(back.runs) == ["A", "B b"] and back.rule == ("top_k", 5)
    assert back.slice == a.slice and back.view == a.view and back.training.data == a.training.data
    names = zipfile.ZipFile(io.BytesIO(write_analysis(a))).namelist()
    assert names[:2] == ["manifest.json", "README.txt"] and all(".." not in n for n in names)
    assert all(n.startswith("inputs/") for n in names[2:]) and len(names) == 2 + 5


def test_the_manifest_lists_every_input_with_its_digest():
    z = zipfile.ZipFile(io.BytesIO(write_analysis(analysis())))
    manifest = json.loads(z.read("manifest.json"))
    assert manifest["format"] == "cophe-analysis" and manifest["format_version"] == 1
    assert [(e["role"], e["run"]) for e in manifest["inputs"]] == [
        ("gold", None),
        ("run", "A"),
        ("run", "B b"),
        ("metadata", None),
        ("training", None),
    ]
    for e in manifest["inputs"]:
        content = z.read(e["member"])
        assert e["size"] == len(content) and e["sha256"] == hashlib.sha256(content).hexdigest()
    assert "docs/analysis-format.md" in z.read("README.txt").decode()
    assert {i.compress_type for i in z.infolist()} == {zipfile.ZIP_DEFLATED}


def test_each_input_is_hashed_once_as_it_is_read_and_keeps_its_sha256(monkeypatch):
    """read_analysis checks every input against its SHA-256 and keeps that digest on the InputFile (the
    dashboard keys its caches by it): each input's bytes are hashed once, and the digest kept is hashlib's."""
    data = write_analysis(analysis())
    a = analysis()
    inputs = {f.data for f in (a.gold, *a.runs.values(), a.metadata, a.training) if f is not None}
    hashed: list[bytes] = []
    real = hashlib.sha256

    def counting(content=b"", *args, **kw):
        hashed.append(bytes(content))
        return real(content, *args, **kw)

    monkeypatch.setattr("cophe_core.output.analysis.hashlib.sha256", counting)
    back = read_analysis(data)
    monkeypatch.undo()
    assert sorted(c for c in hashed if c in inputs) == sorted(inputs)  # each input once, no more
    kept = [f for f in (back.gold, *back.runs.values(), back.metadata, back.training) if f is not None]
    assert len(kept) == len(inputs)
    for f in kept:
        assert vars(f)["sha256"] == real(f.data).hexdigest()  # computed while reading, kept
    assert InputFile("x.csv", b"doc_id,code\n").sha256 == real(b"doc_id,code\n").hexdigest()


def test_the_same_analysis_gives_the_same_bytes():
    assert write_analysis(analysis()) == write_analysis(analysis())
    assert write_analysis(analysis(view={"a": 1, "b": 2})) == write_analysis(analysis(view={"b": 2, "a": 1}))
    assert write_analysis(analysis()) != write_analysis(analysis(rule=("top_k", 6)))


def test_an_analysis_is_checked_when_made_and_does_not_follow_later_changes():
    view = {"page": "tree"}
    a = analysis(view=view, rule=["threshold", 1])
    view["page"] = "compare"
    assert a.view == {"page": "tree"} and a.rule == ("threshold", 1.0)
    for bad, message in [
        ({"runs": {}}, "at least one run"),
        ({"runs": {" ": GOLD}}, "a name of its own"),
        ({"gold": ("g.csv", b"")}, "gold must be an InputFile"),
        ({"options": {"ontology": "/etc/h.csv"}}, "ontology must be one of"),
        ({"options": {"ontology": "custom"}}, "no hierarchy input"),
        ({"options": {"system": "both"}}, "system must be one of"),
        ({"rule": ("threshold", float("nan"))}, "threshold must be"),
        ({"view": {"x": object()}}, "plain JSON"),
        ({"view": {"x": float("inf")}}, "plain JSON"),
        ({"code_sets": {"a": 1}}, "code_sets"),
        ({"created": 5}, "created"),
    ]:
        with pytest.raises(ValueError, match=message):
            analysis(**bad)
    with pytest.raises(ValueError, match="bytes"):
        InputFile("a.csv", "text")
    a.options["ontology"] = "/etc/h.csv"  # changed behind its back: write refuses it too
    with pytest.raises(ValueError, match="ontology must be one of"):
        write_analysis(a)


@settings(max_examples=examples(40), deadline=None)
@given(
    names=st.lists(st.text(min_size=1, max_size=20).filter(str.strip), min_size=1, max_size=4, unique=True),
    files=st.lists(st.text(min_size=1, max_size=30).filter(str.strip), min_size=4, max_size=4),
    payload=st.binary(max_size=200),
    threshold=st.floats(0, 1),
    top_k=st.integers(1, 10**6),
    use_top_k=st.booleans(),
    ontology=st.sampled_from([o for o in ONTOLOGIES if o != "custom"]),
    system=st.sampled_from(SYSTEMS),
    cols=st.lists(st.none() | st.text(min_size=1, max_size=12), min_size=2, max_size=2),
    level=st.none() | st.sampled_from(sorted({lv for lvs in BUILT_IN_LEVELS.values() for lv in lvs})),
    view=st.dictionaries(
        st.text(max_size=8),
        st.none()
        | st.booleans()
        | st.integers()
        | st.text(max_size=8)
        | st.lists(st.text(max_size=5), max_size=3),
        max_size=4,
    ),
)
def test_round_trip_of_any_names_bytes_and_options(
    names, files, payload, threshold, top_k, use_top_k, ontology, system, cols, level, view
):
    if not is_level_of(level, ontology):  # a level of another code system: refused (test_manifest_schema)
        level = None
    a = analysis(
        runs={n: InputFile(files[i % 4], payload + n.encode()) for i, n in enumerate(names)},
        rule=("top_k", top_k) if use_top_k else ("threshold", threshold),
        view=view,
        gold=InputFile(files[0], payload),
        options={
            "ontology": ontology,
            "system": system,
            "doc_col": cols[0],
            "code_col": cols[1],
            "max_level": level,
            "later": [1, {"x": None}],
        },
    )
    data = write_analysis(a)
    back = read_analysis(data, name="any.cophe")
    assert back == a and write_analysis(back) == data


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


def with_member(path: str, content: bytes) -> bytes:
    return zipped({**members_of(analysis()), path: content})


def twice(member: str) -> bytes:
    """A zip holding ``member`` twice (zipfile warns, and keeps both)."""
    out = io.BytesIO()
    with pytest.warns(UserWarning), zipfile.ZipFile(out, "w") as z:
        for k, v in members_of(analysis()).items():
            z.writestr(k, v)
        z.writestr(member, b"other")
    return out.getvalue()


RUN = "inputs/01-run-a.parquet"


@pytest.mark.parametrize(
    "content, message",
    [
        (b"doc_id,code\n1,401.9\n", "not a cophe analysis file"),
        (b"", "not a cophe analysis file"),
        (b"PK\x05\x06" + b"\0" * 18, "no manifest.json"),  # an empty zip
        (zipped({"notes.txt": b"hello"}), "no manifest.json"),
        (zipped({"manifest.json": b"{not json"}), "not valid JSON"),
        (zipped({"manifest.json": b"\xff\xfe\xfa"}), "not valid JSON"),
        (zipped({"manifest.json": b"[" * 100_000 + b"]" * 100_000}), "not valid JSON|does not describe"),
        (
            zipped({"manifest.json": b" " * (MAX_MANIFEST + 1)}),
            "manifest.json inflates to more than 1,000,000 bytes",
        ),
        (zipped({"manifest.json": b'{"format": "other"}'}), "does not describe a cophe analysis"),
        (with_manifest(lambda m: m.update(format_version=99)), "format version 99; .* update cophe"),
        (with_manifest(lambda m: m.update(format_version=True)), "format_version must be a whole number"),
        (with_manifest(lambda m: m.update(format_version="1")), "format_version must be a whole number"),
        (
            with_manifest(lambda m: m.update(rule=["threshold", 1.5])),
            "manifest.json: rule must be",
        ),
        (
            with_manifest(lambda m: m.update(rule=["threshold", -0.1])),
            "manifest.json: rule must be",
        ),
        (with_manifest(lambda m: m.update(rule=["threshold", "nan"])), "manifest.json: rule must be"),
        (with_manifest(lambda m: m.update(rule=["threshold", True])), "manifest.json: rule must be"),
        (with_manifest(lambda m: m.update(rule=["top_k", 0])), "manifest.json: rule must be"),
        (with_manifest(lambda m: m.update(rule=["top_k", 2.5])), "manifest.json: rule must be"),
        (with_manifest(lambda m: m.update(rule=["eval", "1"])), "manifest.json: rule must be"),
        (with_manifest(lambda m: m.update(rule=["threshold", 0.5, 1])), "manifest.json: rule must be"),
        (with_manifest(lambda m: m.update(rule="threshold")), "manifest.json: rule must be"),
        (with_manifest(lambda m: m["options"].update(ontology="/etc/passwd")), "ontology must be one of"),
        (with_manifest(lambda m: m["options"].update(ontology="custom")), "no hierarchy input"),
        (with_manifest(lambda m: m["options"].update(system="x")), "system must be one of"),
        (
            with_manifest(lambda m: m["options"].update(doc_col={"a": 1})),
            "manifest.json: options.doc_col must be text",
        ),
        (
            with_manifest(lambda m: m["options"].update(max_level=3)),
            "manifest.json: options.max_level must be a level",
        ),
        (with_manifest(lambda m: m.update(options=[])), "options must be an object"),
        (with_manifest(lambda m: m.update(view=[1, 2])), "view must be an object"),
        (with_manifest(lambda m: m.update(slice="rare")), "slice must be an object"),
        (with_manifest(lambda m: m.update(code_sets="ab")), "code_sets must be an object"),
        (
            with_manifest(lambda m: m.update(code_sets={"a": 1})),
            "manifest.json: code_sets must be an object of text values",
        ),
        (with_manifest(lambda m: m.update(created={"when": 1})), "created must be text"),
        (with_manifest(lambda m: m.update(inputs={"gold": 1})), "inputs must be a list"),
        (
            with_manifest(lambda m: m["inputs"].append("gold")),
            r"manifest.json: inputs\[5\] must be an object",
        ),
        (
            with_manifest(lambda m: m["inputs"][1].update(role="model")),
            r"manifest.json: inputs\[1\].role must be one of",
        ),
        (with_manifest(lambda m: m["inputs"][1].update(sha256="0" * 64)), "does not match its SHA-256"),
        (with_manifest(lambda m: m["inputs"][1].pop("sha256")), "does not match its SHA-256"),
        (with_manifest(lambda m: m["inputs"][1].update(size=3)), "holds 6 bytes, not the 3"),
        (
            with_manifest(lambda m: m["inputs"][1].update(size="6")),
            r"manifest.json: inputs\[1\].size must be a whole number",
        ),
        (
            with_manifest(lambda m: m["inputs"][1].update(file=["a"])),
            r"manifest.json: inputs\[1\].file must be text",
        ),
        (
            with_manifest(lambda m: m["inputs"][1].update(file="")),
            r"manifest.json: inputs\[1\].file must be text",
        ),
        (
            with_manifest(lambda m: m["inputs"][1].update(member="inputs/gone.csv")),
            "listed in manifest.json but missing",
        ),
        (
            with_manifest(lambda m: m["inputs"][1].update(member="manifest.json")),
            "listed in manifest.json but missing",
        ),
        (with_manifest(lambda m: m["inputs"].append(dict(m["inputs"][1], run="C"))), "listed twice"),
        (with_manifest(lambda m: m["inputs"][2].update(run=m["inputs"][1]["run"])), "a name of its own"),
        (with_manifest(lambda m: m["inputs"][2].update(run=None)), "a name of its own"),
        (with_manifest(lambda m: m["inputs"][1].update(role="gold")), "two inputs have the role gold"),
        (with_manifest(lambda m: m.update(inputs=[m["inputs"][0]])), "at least one run"),
        (with_manifest(lambda m: m.update(inputs=m["inputs"][1:])), "one gold standard"),
        (with_member(RUN, b"PAR1\x00\x02"), "does not match its SHA-256"),
        (with_member("../../etc/passwd", b"x"), "path outside the archive"),
        (with_member("/abs.csv", b"x"), "path outside the archive"),
        (with_member("inputs\\..\\x.csv", b"x"), "path outside the archive"),
        (with_member("C:/x.csv", b"x"), "path outside the archive"),
        (zipped({f"m{i}": b"" for i in range(70)}), "members"),
    ],
    ids=lambda v: v if isinstance(v, str) else "zip",
)  # the bytes hold the time they were zipped: not an id
def test_bad_files_are_refused_with_the_file_named(content, message):
    with pytest.raises(InputError, match=r"^shared\.cophe: .*(" + message + ")"):
        read_analysis(content, name="shared.cophe")


def test_a_member_named_twice_is_refused():
    for member in (RUN, "manifest.json"):
        with pytest.raises(InputError, match=r"^shared\.cophe: member .* appears twice"):
            read_analysis(twice(member), name="shared.cophe")


def test_a_directory_too_large_for_its_members_is_refused_before_it_is_parsed(monkeypatch):
    data = bytearray(write_analysis(analysis()))
    end = data.rfind(b"PK\x05\x06")
    data[end + 12 : end + 16] = (64 * 1024 + 1).to_bytes(4, "little")  # the central directory's declared size
    with pytest.raises(InputError, match=r"^shared\.cophe: the zip lists too many members"):
        read_analysis(bytes(data), name="shared.cophe")
    monkeypatch.setattr(zipfile, "ZIP_FILECOUNT_LIMIT", 0)  # makes zipfile write a zip64 end record
    zip64 = zipped(members_of(analysis()))
    assert b"PK\x06\x07" in zip64
    with pytest.raises(InputError, match=r"^shared\.cophe: the zip lists too many members"):
        read_analysis(zip64, name="shared.cophe")


def test_a_member_that_inflates_beyond_the_bound_is_refused():
    m = members_of(analysis(runs={"A": InputFile("a.csv", b"0" * 2_000_000)}))
    bomb = zipped(m)
    assert len(bomb) < 50_000  # 2 MB of zeros compress to a few kB
    with pytest.raises(InputError, match=r"^shared\.cophe: .*inflate"):
        read_analysis(bomb, name="shared.cophe", max_bytes=1_000_000)
    assert read_analysis(bomb, name="shared.cophe", max_bytes=3_000_000).runs["A"].data == b"0" * 2_000_000


def test_headers_that_understate_a_size_do_not_get_past_the_bounded_read():
    bomb = zipped(members_of(analysis(runs={"A": InputFile("a.csv", b"0" * 2_000_000)})))
    declared = (2_000_000).to_bytes(4, "little")
    assert bomb.count(declared) == 2  # the local header and the central directory
    lying = bomb.replace(declared, (16).to_bytes(4, "little"))
    # the zip's header and the manifest disagree: refused before anything is inflated
    with pytest.raises(
        InputError, match=r"^shared\.cophe: 'inputs/01-run-a.csv' holds 16 bytes, not the 2,000,000 manifest"
    ):
        read_analysis(lying, name="shared.cophe", max_bytes=1_000_000)
    z = zipfile.ZipFile(io.BytesIO(bomb))
    with pytest.raises(
        InputError, match=r"^shared\.cophe: 'inputs/01-run-a.csv' inflates beyond the 1,000 bytes"
    ):
        read_member(z, z.getinfo("inputs/01-run-a.csv"), 1_000, "shared.cophe")
    with pytest.raises(InputError, match=r"^shared\.cophe: its members inflate to more than 1,000,000 bytes"):
        read_analysis(bomb, name="shared.cophe", max_bytes=1_000_000)  # the declared sizes are checked first


@settings(max_examples=examples(60), deadline=None)
@given(st.binary(max_size=5_000), st.integers(0, 60))
def test_a_deflated_member_is_inflated_in_one_call_with_the_same_bytes(text, repeats):
    """A member of a zip in memory is inflated in one call (ISA-L's inflater, a third of zlib's time): the same
    bytes, and never through zipfile's stream."""
    content = text * repeats
    data = write_zip([zip_member("inputs/01-run-a.csv", content)])
    z = zipfile.ZipFile(io.BytesIO(data))
    info = z.getinfo("inputs/01-run-a.csv")

    def no_stream(*args, **kwargs):
        raise AssertionError("read through zipfile's stream")

    with mock.patch.object(zipfile.ZipFile, "open", no_stream):
        assert read_member(z, info, info.file_size, "shared.cophe") == content


def test_a_member_inflated_in_one_call_is_refused_when_damaged_or_larger_than_declared():
    """What the one call cannot read, zipfile's bounded reading refuses: a member larger than its headers say
    (zipfile stops at the declared size, where the CRC fails), or one whose bytes do not match its CRC."""
    bomb = zipped(members_of(analysis(runs={"A": InputFile("a.csv", b"0" * 2_000_000)})))
    lying = bomb.replace((2_000_000).to_bytes(4, "little"), (16).to_bytes(4, "little"))
    z = zipfile.ZipFile(io.BytesIO(lying))
    with pytest.raises(InputError, match=r"^shared\.cophe: 'inputs/01-run-a.csv' is damaged \(BadZipFile\)"):
        read_member(z, z.getinfo("inputs/01-run-a.csv"), 16, "shared.cophe")
    good = zipfile.ZipFile(io.BytesIO(bomb))
    info = good.getinfo("inputs/01-run-a.csv")
    info.CRC ^= 1  # the member's bytes no longer match its CRC
    with pytest.raises(InputError, match=r"^shared\.cophe: 'inputs/01-run-a.csv' is damaged \(BadZipFile\)"):
        read_member(good, info, info.file_size, "shared.cophe")


def test_the_one_call_inflates_no_further_than_the_declared_size():
    """20 MB of zeros deflate to 20 kB; headers that say 16 bytes get 17 bytes inflated, not 20 MB, before the
    member is refused (Python's allocations, which hold what the inflater writes, traced)."""
    import tracemalloc

    bomb = zipped({"inputs/01-run-a.csv": bytes(20_000_000)})
    assert len(bomb) < 50_000
    lying = bomb.replace((20_000_000).to_bytes(4, "little"), (16).to_bytes(4, "little"))
    z = zipfile.ZipFile(io.BytesIO(lying))
    info = z.getinfo("inputs/01-run-a.csv")
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match=r"^shared\.cophe: 'inputs/01-run-a.csv' is damaged"):
            read_member(z, info, 16, "shared.cophe")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000
    info.CRC = zlib.crc32(bytes(17))  # the CRC of the 17 bytes inflated: the length alone refuses them
    with pytest.raises(InputError, match=r"^shared\.cophe: 'inputs/01-run-a.csv' is damaged"):
        read_member(z, info, 16, "shared.cophe")


class Endless:
    """A member whose data never end, which only a bounded read survives."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def read(self, n=-1):
        assert n is not None and n >= 0, "an unbounded read"
        return b"0" * n


def test_a_member_is_read_no_further_than_its_bound():
    class Archive:
        def open(self, info):
            return Endless()

    with pytest.raises(InputError, match=r"^shared\.cophe: 'inputs/x' inflates beyond the 1,000 bytes"):
        read_member(Archive(), zipfile.ZipInfo("inputs/x"), 1_000, "shared.cophe")


@settings(max_examples=examples(150), deadline=None)
@given(st.data())
def test_a_damaged_file_is_refused_or_read_never_anything_else(data):
    raw = bytearray(write_analysis(analysis()))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        raw = raw[: data.draw(st.integers(0, len(raw)))]
    try:
        back = read_analysis(bytes(raw), name="shared.cophe")
    except InputError as e:
        assert str(e).startswith("shared.cophe: ")
    else:  # only what nothing reads (README.txt, zip metadata) was changed
        assert back == analysis()


def test_analysis_from_files_keeps_the_bytes(tmp_path):
    (tmp_path / "h.csv").write_bytes(b"child,parent\nroot,\nA,root\n")
    a = analysis_from_files(
        SAMPLE / "gold.csv",
        {"mine": SAMPLE / "run_siblings.csv"},
        hierarchy=tmp_path / "h.csv",
        options={"ontology": "custom"},
        rule=None,
    )
    assert a.gold.data == (SAMPLE / "gold.csv").read_bytes() and a.runs["mine"].name == "run_siblings.csv"
    assert a.hierarchy.name == "h.csv" and a.view == {"page": "levels"}


# ---- cophe score … --save ------------------------------------------------------------------------------------


def rescored(a: Analysis, run: str) -> float:
    """CoPHE overall F1 of the saved inputs scored again with score_files and the saved options."""
    o = a.options
    rule = {a.rule[0]: a.rule[1]} if a.rule else {}
    scoring = score_files(
        a.gold.data,
        {k: f.data for k, f in a.runs.items()},
        ontology=o["ontology"],
        system=o["system"],
        doc_col=o["doc_col"],
        code_col=o["code_col"],
        **rule,
    )
    return scoring.evaluation(run, max_level=o["max_level"]).score("cophe").f1


@pytest.mark.parametrize(
    "pred, extra, rule",
    [
        ("run_siblings.csv", [], None),
        ("run_siblings.csv", ["--ontology", "icd9", "--max-level", "e1"], None),
        ("scores_model.csv", ["--threshold", "0.5"], ("threshold", 0.5)),
        ("scores_model.csv", ["--threshold", "0.4"], ("threshold", 0.4)),
        ("scores_model.csv", ["--top-k", "7"], ("top_k", 7)),
    ],
)
def test_cli_save_opens_and_scores_the_same(tmp_path, capsys, pred, extra, rule):
    out = tmp_path / "run.cophe"
    assert (
        main(
            [
                "score",
                "--gold",
                str(SAMPLE / "gold.csv"),
                "--pred",
                str(SAMPLE / pred),
                *extra,
                "--format",
                "json",
                "--save",
                str(out),
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    a = read_analysis(out.read_bytes(), name=out.name)
    run = pred.removesuffix(".csv")
    assert a.rule == rule and list(a.runs) == [run] and a.runs[run].name == pred
    assert (
        a.gold.data == (SAMPLE / "gold.csv").read_bytes() and a.runs[run].data == (SAMPLE / pred).read_bytes()
    )
    assert a.options["ontology"] == ("icd9" if "icd9" in extra else "auto")
    assert a.options["max_level"] == ("e1" if "e1" in extra else None)
    assert a.code_sets == printed["code_sets"] and a.view == {"page": "levels"}
    assert a.cophe_version and a.created.endswith("+00:00")
    assert rescored(a, run) == pytest.approx(printed["cophe"]["overall"]["f1"], abs=1e-12)
    again = score_analysis(a).evaluation(run, max_level=a.options["max_level"])
    assert again.score("cophe").f1 == pytest.approx(printed["cophe"]["overall"]["f1"], abs=1e-12)


def cli_save(out, *extra) -> bytes:
    args = ["score", "--gold", str(SAMPLE / "gold.csv"), "--pred", str(SAMPLE / "scores_model.csv")]
    assert main([*args, "--threshold", "0.4", *extra, "--save", str(out)]) == 0
    return out.read_bytes()


def manifest_of(data: bytes) -> dict:
    return json.loads(zipfile.ZipFile(io.BytesIO(data)).read("manifest.json"))


def test_cli_save_with_source_date_epoch_is_byte_identical(tmp_path, capsys, monkeypatch):
    """Reproducible files: the time is SOURCE_DATE_EPOCH, the member times are fixed."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    first = cli_save(tmp_path / "a.cophe")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    second = cli_save(tmp_path / "b.cophe")
    assert first == second
    assert manifest_of(first)["created"] == "2023-11-14T22:13:20+00:00"
    assert {i.date_time for i in zipfile.ZipFile(io.BytesIO(first)).infolist()} == {(2020, 1, 1, 0, 0, 0)}
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000001")  # another time, another file: the time is used
    assert cli_save(tmp_path / "c.cophe") != first


def test_cli_save_without_source_date_epoch_keeps_the_checksum(tmp_path, capsys, monkeypatch):
    """Without SOURCE_DATE_EPOCH the current time is recorded, and left out of the checksum."""
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    times = (f"2026-01-01T00:00:{s:02d}+00:00" for s in range(60))  # a new time for each save
    monkeypatch.setattr("cophe_core.output.analysis.creation_time", lambda environ=None: next(times))
    first, second = manifest_of(cli_save(tmp_path / "a.cophe")), manifest_of(cli_save(tmp_path / "b.cophe"))
    assert first["created"] != second["created"]
    assert (
        first["checksum"]
        == second["checksum"]
        == analysis_checksum(read_analysis(cli_save(tmp_path / "c.cophe")))
    )
    manifest = {k: v for k, v in first.items() if k not in ("created", "checksum")}
    expected = hashlib.sha256(json.dumps(manifest, indent=1, sort_keys=True).encode()).hexdigest()
    assert first["checksum"] == "sha256:" + expected  # the manifest without its time, inputs by their SHA-256
    other = manifest_of(cli_save(tmp_path / "d.cophe", "--max-level", "e0"))
    assert other["checksum"] != first["checksum"]  # another setting, another checksum


def test_cli_save_refuses_a_malformed_source_date_epoch(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    args = ["score", "--gold", str(SAMPLE / "gold.csv"), "--pred", str(SAMPLE / "scores_model.csv")]
    assert main([*args, "--threshold", "0.4", "--save", str(tmp_path / "a.cophe")]) == 2
    assert (
        "cophe: error: --save "
        + str(tmp_path / "a.cophe")
        + ": SOURCE_DATE_EPOCH is 'yesterday'; set it to a "
        "whole number of seconds since 1970-01-01 UTC"
    ) in capsys.readouterr().err


def test_cli_save_keeps_a_tuned_threshold(tmp_path, capsys):
    out = tmp_path / "tuned.cophe"
    assert (
        main(
            [
                "score",
                "--gold",
                str(SAMPLE / "gold.csv"),
                "--pred",
                str(SAMPLE / "scores_model.csv"),
                "--tune-on",
                str(SAMPLE / "dev_gold.csv"),
                str(SAMPLE / "dev_scores.csv"),
                "--format",
                "json",
                "--save",
                str(out),
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    a = read_analysis(out.read_bytes())
    assert a.rule == ("threshold", printed["decision"]["threshold"])
    assert rescored(a, "scores_model") == pytest.approx(printed["cophe"]["overall"]["f1"], abs=1e-12)


def test_cli_save_holds_a_hierarchy_file_as_an_input(tmp_path, capsys):
    h = tmp_path / "my hierarchy.csv"
    h.write_text("child,parent\nroot,\nA,root\nB,root\nA1,A\nA2,A\nB1,B\n")
    gold, pred = tmp_path / "gold.csv", tmp_path / "model.csv"
    gold.write_text("doc_id,code\n1,A1\n2,B1\n")
    pred.write_text("doc_id,code\n1,A2\n2,B1\n")
    out = tmp_path / "custom.cophe"
    assert (
        main(
            [
                "score",
                "--gold",
                str(gold),
                "--pred",
                str(pred),
                "--ontology",
                str(h),
                "--format",
                "json",
                "--save",
                str(out),
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    a = read_analysis(out.read_bytes())
    assert a.options["ontology"] == "custom" and a.hierarchy == InputFile("my hierarchy.csv", h.read_bytes())
    h.unlink()  # the saved analysis needs nothing from this machine
    again = score_analysis(a).evaluation("model")
    assert again.score("cophe").f1 == pytest.approx(printed["cophe"]["overall"]["f1"])


def test_cli_save_into_a_missing_folder_exits_2(tmp_path, capsys):
    code = main(
        [
            "score",
            "--gold",
            str(SAMPLE / "gold.csv"),
            "--pred",
            str(SAMPLE / "run_siblings.csv"),
            "--save",
            str(tmp_path / "missing" / "a.cophe"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("cophe: error:")]
    assert (
        len(errors) == 1
        and errors[0].startswith("cophe: error: --save ")
        and "folder that exists" in errors[0]
    )
    assert not (tmp_path / "missing").exists()


def test_cli_help_says_what_the_saved_file_is_for(capsys):
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    assert "Open a saved analysis" in " ".join(capsys.readouterr().out.split())


def test_cli_csv_exports_defuse_formulas(tmp_path):
    gold = tmp_path / "gold.csv"
    gold.write_text("doc_id,code\n=cmd|' /C calc'!A0,401.9\n@SUM(1),428.0\n")
    pred = tmp_path / "pred.csv"
    pred.write_text("doc_id,code\n=cmd|' /C calc'!A0,401.9\n+1,=HYPERLINK(x)\n")
    rejected, docs = tmp_path / "rejected.csv", tmp_path / "documents.csv"
    assert (
        main(
            [
                "score",
                "--gold",
                str(gold),
                "--pred",
                str(pred),
                "--ontology",
                "icd9",
                "--max-rejected",
                "1",  # half the rows are bad on purpose
                "--rejected",
                str(rejected),
                "--documents",
                str(docs),
            ]
        )
        == 0
    )
    import pandas as pd

    for path in (rejected, docs):
        cells = pd.read_csv(path, dtype=str, keep_default_na=False).to_numpy().ravel()
        assert not [c for c in cells if c[:1] in ("=", "+", "@")], path
    assert "'=cmd|' /C calc'!A0" in docs.read_text() and "'=HYPERLINK(x)" in rejected.read_text()


def test_the_format_doc_example_writes_a_file_that_opens(tmp_path, monkeypatch):
    from tests.conftest import ROOT

    doc = (ROOT / "docs" / "analysis-format.md").read_text()
    code = doc.split("## Writing one from a training script")[1].split("```python\n")[1].split("```")[0]
    assert len(code.strip().splitlines()) <= 6
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sample_data").symlink_to(
        ROOT / "sample_data", target_is_directory=True
    )  # the example's paths
    exec(code, {})  # the documentation's own example
    a = read_analysis((tmp_path / "epoch12.cophe").read_bytes(), name="epoch12.cophe")
    assert list(a.runs) == ["epoch 12"] and a.rule == ("threshold", 0.35)
    assert score_analysis(a).evaluation("epoch 12").score("cophe").f1 > 0.5
    manifest = json.loads(doc.split("```json\n")[1].split("```")[0])
    assert manifest["format"] == "cophe-analysis" and {e["role"] for e in manifest["inputs"]} == {
        "gold",
        "run",
    }


def _spy_reads(monkeypatch) -> list[tuple[str, int]]:
    """Every member read by read_analysis, with the bound it was read to."""
    import cophe_core.output.analysis as module

    reads: list[tuple[str, int]] = []

    def spy(z, info, limit, name):
        reads.append((info.filename, limit))
        return read_member(z, info, limit, name)

    monkeypatch.setattr(module, "read_member", spy)
    return reads


def test_an_input_over_its_upload_limit_is_refused_before_it_is_inflated(monkeypatch):
    """A gold standard of 100-199 MB deflated into a 0.15-0.29 MB saved analysis was scored, at 2.4-4.5 GB."""
    from cophe_core.base.files import MB
    from cophe_core.output.analysis import INPUT_MB

    big = b"doc_id,code\n" + b"1,401.9\n" * ((INPUT_MB["gold"] * MB) // 8 + 1)
    manifest_and_members = members_of(analysis(gold=GOLD))
    inputs = json.loads(manifest_and_members["manifest.json"])["inputs"]
    gold_member = inputs[0]["member"]
    manifest = json.loads(manifest_and_members["manifest.json"])
    manifest["inputs"][0].update(size=len(big), sha256=hashlib.sha256(big).hexdigest())
    bomb = zipped({**manifest_and_members, gold_member: big, "manifest.json": json.dumps(manifest).encode()})
    assert len(bomb) < 500_000
    reads = _spy_reads(monkeypatch)
    with pytest.raises(InputError) as e:
        read_analysis(bomb, name="shared.cophe")
    assert str(e.value).startswith(
        f"shared.cophe: the gold input 'gold.csv' is {len(big) / MB:,.1f} MB; a saved analysis holds inputs "
        f"of at most {INPUT_MB['gold']} MB for a gold"
    )
    assert gold_member not in [m for m, _ in reads]  # refused from the listed size, nothing inflated
    with pytest.raises(ValueError, match="larger than 50 MB"):
        write_analysis(analysis(gold=InputFile("gold.csv", big)))  # what cannot be opened is not written


def test_a_member_larger_than_its_listed_size_is_refused_before_it_is_inflated(monkeypatch):
    """The manifest listed 63 B, the zip's header 499 MB: the member was inflated before the sizes were compared."""
    m = members_of(analysis())
    manifest = json.loads(m["manifest.json"])
    run = manifest["inputs"][1]
    listed = run["size"]
    m[run["member"]] = b"0" * 3_000_000  # the zip now says 3 MB, the manifest still its listed size
    reads = _spy_reads(monkeypatch)
    with pytest.raises(InputError, match=rf"holds 3,000,000 bytes, not the {listed:,} manifest.json lists"):
        read_analysis(zipped(m), name="shared.cophe")
    assert run["member"] not in [name for name, _ in reads]


@pytest.mark.parametrize("ontology", ["icd9", "auto", "icd10pcs"])
def test_a_forged_max_level_is_an_input_error_naming_the_field(ontology):
    """options.max_level "bogus" was accepted, then raised a bare ValueError when the analysis was scored; it
    is refused on opening, before the inputs are read, as is a level of another code system."""
    for level in ("bogus", "e4" if ontology == "icd9" else "E0"):
        forged = with_manifest(lambda m, lv=level: m["options"].update(ontology=ontology, max_level=lv))
        with pytest.raises(
            InputError, match=r"^shared\.cophe: manifest\.json: options\.max_level must be a level"
        ):
            read_analysis(forged, name="shared.cophe")
    with pytest.raises(ValueError, match="max_level must be a level of the code system icd9"):
        write_analysis(analysis(options={"ontology": "icd9", "max_level": "bogus"}))


def test_a_max_level_not_in_a_user_hierarchy_is_an_input_error_once_it_is_read():
    a = analysis(
        runs={"A": InputFile("a.csv", b"doc_id,code\n1,b\n")},
        hierarchy=InputFile("h.csv", b"child,parent\na,\nb,a\n"),
        options={"ontology": "custom", "max_level": "bogus"},
        rule=None,
        metadata=None,
        training=None,
        gold=InputFile("gold.csv", b"doc_id,code\n1,b\n"),
    )
    with pytest.raises(InputError, match=r"^manifest\.json: options\.max_level 'bogus' is not a level"):
        score_analysis(read_analysis(write_analysis(a), name="shared.cophe"))


def test_opening_a_saved_analysis_imports_no_slicing_code():
    """Issue 29, point 1: a saved analysis within its bounds costs no more than its members scored as plain files.
    Checking its manifest needed one constant of the slicing module (the bound on bin edges), whose import
    brought the slicing code, the bootstrap and the metric suite: about 30 ms of CPU that scoring plain files
    never spends."""
    import subprocess
    import sys

    code = (
        "import sys; from cophe_core.output.analysis import read_analysis, score_analysis; "
        "print(sorted(m for m in ('cophe_core.breakdown.slices', 'cophe_core.breakdown.stats', "
        "'cophe_core.scoring.suite') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
