"""The archive readers under fuzzing (issue 29, points 2 and 9): random manifests, random values in every field,
random member sizes and contents, forged Parquet footers. Each file either opens or is refused with
InputError naming it; no other exception ever leaves read_analysis or read_aggregate (nor the aggregate's
tables read on demand)."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cophe_core import InputError, score_files
from cophe_core.output.analysis import Analysis, InputFile, read_analysis, write_analysis
from cophe_core.scale.aggregate import aggregate_scoring, write_aggregate
from cophe_core.scale.aggregate_reader import read_aggregate
from tests.conftest import examples

NAME = "fuzzed.cophe"

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.sampled_from(["e0", "e1", "threshold", "top_k", "auto", "icd9", "custom", "gold", "run", ""]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _members(data: bytes) -> dict[str, bytes]:
    z = zipfile.ZipFile(io.BytesIO(data))
    return {n: z.read(n) for n in z.namelist()}


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for k, v in members.items():
            z.writestr(k, v)
    return out.getvalue()


SAVED = _members(
    write_analysis(
        Analysis(
            InputFile("gold.csv", b"doc_id,code\n1,401.9\n2,428.0\n"),
            {"A": InputFile("a.csv", b"doc_id,code\n1,401.1\n")},
            options={"ontology": "icd9", "system": "auto", "max_level": "e1"},
            rule=("threshold", 0.5),
            slice={"slice_dimension": "gold_codes"},
            view={"page": "compare", "cmp_baseline": "A"},
        )
    )
)
AGGREGATE = _members(
    write_aggregate(
        aggregate_scoring(
            score_files(b"doc_id,code\n1,401.9\n2,428.0\n", {"A": b"doc_id,code\n1,401.1\n"}),
            slice_edges=(1,),
        )
    )
)


def _paths(value, at=()):
    """Every path to a value inside the manifest (keys and list positions)."""
    yield at
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*at, i))


def _set(manifest, path, value):
    if not path:
        return value
    target = manifest
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return manifest


def _opens_or_is_refused(kind: str, data: bytes) -> None:
    try:
        if kind == "saved":
            read_analysis(data, name=NAME)
        else:
            agg = read_aggregate(data, name=NAME)
            for run in agg.run_names:
                ev = agg.evaluation(run)
                ev.levels_table  # noqa: B018
                if ev.has_documents:  # an aggregate may be written without it (a capability, not a fault)
                    len(ev.documents)  # the per-document table, read on demand
    except InputError as e:
        assert str(e).startswith(f"{NAME}: "), str(e)[:200]


BASE = {"saved": SAVED, "aggregate": AGGREGATE}
FUZZ = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("kind", ["saved", "aggregate"])
@FUZZ
@given(data=st.data())
def test_a_random_value_in_any_manifest_field_opens_or_is_refused(kind, data):
    members = dict(BASE[kind])
    manifest = json.loads(members["manifest.json"])
    path = data.draw(st.sampled_from(list(_paths(manifest))))
    manifest = _set(manifest, path, data.draw(JSON))
    members["manifest.json"] = json.dumps(manifest).encode()
    _opens_or_is_refused(kind, _zip(members))


@pytest.mark.parametrize("kind", ["saved", "aggregate"])
@FUZZ
@given(manifest=JSON)
def test_a_random_manifest_opens_or_is_refused(kind, manifest):
    members = dict(BASE[kind])
    members["manifest.json"] = json.dumps(manifest).encode()
    _opens_or_is_refused(kind, _zip(members))


def _relisted(kind: str, members: dict[str, bytes], path: str) -> dict[str, bytes]:
    """The manifest made to list ``path``'s new size and SHA-256, so the reader goes past those checks."""
    manifest = json.loads(members["manifest.json"])
    content = members[path]
    listed = manifest["members"] if kind == "aggregate" else {}
    entries = (
        manifest["inputs"] if kind == "saved" else [dict(listed[path], member=path)] if path in listed else []
    )
    for entry in entries:
        if entry.get("member") == path:
            entry.update(size=len(content), sha256=hashlib.sha256(content).hexdigest())
            if kind == "aggregate":
                manifest["members"][path] = {k: v for k, v in entry.items() if k != "member"}
    return {**members, "manifest.json": json.dumps(manifest).encode()}


@pytest.mark.parametrize("kind", ["saved", "aggregate"])
@FUZZ
@given(data=st.data())
def test_random_member_contents_and_sizes_open_or_are_refused(kind, data):
    members = dict(BASE[kind])
    path = data.draw(st.sampled_from(sorted(m for m in members if m != "manifest.json")))
    content = members[path]
    mode = data.draw(st.sampled_from(["truncate", "extend", "replace", "flip"]))
    if mode == "truncate":
        content = content[: data.draw(st.integers(0, len(content)))]
    elif mode == "extend":
        content += data.draw(st.binary(max_size=2_000))
    elif mode == "replace":
        content = data.draw(st.binary(max_size=2_000))
    else:
        at = data.draw(st.integers(0, max(len(content) - 1, 0)))
        content = content[:at] + bytes([data.draw(st.integers(0, 255))]) + content[at + 1 :]
    members[path] = content
    if data.draw(st.booleans()):
        members = _relisted(kind, members, path)
    _opens_or_is_refused(kind, _zip(members))


@FUZZ
@given(data=st.data())
def test_forged_parquet_footers_open_or_are_refused(data):
    """A Parquet file ends with its footer (the schema, row counts and sizes, Thrift-encoded), its length and
    PAR1: bytes changed there, the member listed again with its new size and SHA-256."""
    members = dict(AGGREGATE)
    path = data.draw(st.sampled_from(sorted(m for m in members if m.endswith(".parquet"))))
    content = bytearray(members[path])
    footer = int.from_bytes(content[-8:-4], "little")
    start = max(len(content) - 8 - footer, 0)
    for _ in range(data.draw(st.integers(1, 8))):
        at = data.draw(st.integers(start, len(content) - 1))
        content[at] = data.draw(st.integers(0, 255))
    members[path] = bytes(content)
    _opens_or_is_refused("aggregate", _zip(_relisted("aggregate", members, path)))


@pytest.mark.parametrize(
    "part, key, value, message",
    [
        ("options", "max_level", ["e0"], "options.max_level must be a level"),
        ("options", "system", {"a": 1}, "options.system must be one of"),
        ("options", "header", "yes", "options.header must be true, false or null"),
        ("code_sets", "icd9", 5, "code_sets must be an object of text values"),
    ],
)
def test_a_forged_setting_is_refused_naming_the_member_and_the_field(part, key, value, message):
    """Options and code sets are refused when forged; the view and the slice are not: the dashboard opens the
    analysis and leaves each forged view value out with a note (tests/app/test_chosen_values.py)."""
    members = dict(SAVED)
    manifest = json.loads(members["manifest.json"])
    manifest[part] = {**(manifest.get(part) or {}), key: value}
    members["manifest.json"] = json.dumps(manifest).encode()
    with pytest.raises(InputError, match=f"^{NAME}: manifest.json: {message}"):
        read_analysis(_zip(members), name=NAME)
