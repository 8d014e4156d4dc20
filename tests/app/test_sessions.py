"""Many users on one server: an upload's scoring lives in its own session and is freed with it; the bundled
samples are scored once for everybody."""

from __future__ import annotations

from tests.app.conftest import run_app, upload

GOLD = ("gold.csv", b"doc_id,code\n1,401.9\n2,428.0\n")
RUN = [("run.csv", b"doc_id,code\n1,401.9\n2,428.1\n")]


def _kept(at) -> int:
    """The scorings of uploads the session keeps."""
    from cophe_dashboard import loading

    return at.session_state["_memo"].count(loading.scored_upload)


def _scoring(at):
    return at.session_state["_ctx"].scoring


def test_an_upload_is_scored_per_session_and_the_sample_once():
    first, second = run_app(), run_app()
    assert _scoring(first) is _scoring(second)  # the sample: shared
    a, b = upload(first, GOLD, RUN), upload(second, GOLD, RUN)
    assert _scoring(a) is not _scoring(b)  # the same bytes, uploaded twice: nothing shared across sessions
    assert _scoring(a).evaluation("run").score("flat").tp == 1
    assert _kept(a) == _kept(b) == 1  # one entry each


def test_a_session_keeps_its_last_two_scorings_only():
    at = upload(run_app(), GOLD, RUN)
    for i in range(3):  # three more uploads: new content each time
        at.file_uploader(key="gold_file").set_value(
            ("gold.csv", GOLD[1] + f"{3 + i},250.00\n".encode(), "text/csv")
        )
        at.run()
    assert not at.exception and _kept(at) == 2
