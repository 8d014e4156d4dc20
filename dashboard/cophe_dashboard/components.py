"""Pieces every page draws: user strings escaped for Markdown, the panel of rows that were not scored, the
question of the code system, and the download buttons of figures and tables."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import re
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from cophe_core import Scoring
from cophe_core.base.files import counted
from cophe_core.output.figures_export import FORMATS, find_browser, publication, render
from cophe_core.output.report import figure_html
from cophe_core.scale.aggregate import Aggregate
from cophe_core.scoring.labels import NothingScorable, TooManyRejected, main_reasons
from cophe_dashboard import downloads, pages


def md(text: object) -> str:
    """Escape a user string for Markdown (file names, run names, doc ids, codes)."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$])", r"\\\1", str(text))


def label_md(text: object) -> str:
    """A user string for a widget's label: as it is when it holds only letters, digits, spaces, ``.``, ``_``
    and ``-`` (nothing Markdown makes a link, image or markup of), else escaped by :func:`md`. A label's
    raw text is also its accessible name, which backslashes would garble for a screen reader.

    >>> label_md("preds_siblings.csv"), label_md("![x](u)") == md("![x](u)")
    ('preds_siblings.csv', True)
    """
    text = str(text)
    return text if re.fullmatch(r"[\w .\-]*", text) else md(text)


def keep_choice(key: str, options: list | tuple) -> None:
    """Carry a choice widget's value across a change of its labels, before the widget is drawn.

    Streamlit sends a selectbox's (radio's, segmented control's) value back as its label, as ``format_func``
    wrote it on the last run. When the labels change under it (Technical terms switched, a run's counts in a
    document's label), the old label is no option of the new ones and came back as the value itself:
    "ValueError: unknown level 'Section'". Setting the value again as a value, before the widget reads it,
    makes Streamlit write it with the new labels.
    """
    if key in st.session_state:
        value = st.session_state[key]
        if value in options:
            st.session_state[key] = value


def rows(n: int) -> str:
    """``"1 input row was"``, ``"2 input rows were"``: a count of input rows in words.

    >>> rows(1), rows(1200)
    ('1 input row was', '1,200 input rows were')
    """
    return f"{n:,} input row was" if n == 1 else f"{n:,} input rows were"


@dataclass(frozen=True)
class Problems:
    """What an input set's problems panel shows."""

    rejected: pd.DataFrame
    flagged: pd.DataFrame
    notes: list[str]
    needs_system: bool = False

    @classmethod
    def of(cls, scoring: Scoring | Aggregate) -> Problems:
        found = scoring.not_scored()
        return cls(found.rejected, found.flagged, found.notes, found.needs_system)


def problems_panel(scoring: Scoring | Aggregate) -> None:
    """Rejected and flagged rows, and input warnings: counts, first rows with reasons, downloads."""
    c = Problems.of(scoring)
    if len(c.rejected):
        with st.container(border=True):
            st.error(
                f"**{rows(len(c.rejected))} not scored.** Each is listed with its file, line, "
                "value and the reason; fix them and upload again, or accept that they are left out."
            )
            by_reason = (  # one row per file and kind of problem, with the words of its first row
                c.rejected.groupby(["file", "kind"], sort=False)
                .agg(reason=("reason", "first"), rows=("reason", "size"))
                .reset_index()[["file", "reason", "rows"]]
            )
            st.dataframe(by_reason, hide_index=True, width="stretch")
            st.caption("First rejected rows")
            # the reason in words on screen; its kind, for programs, stays in the downloaded CSV
            st.dataframe(c.rejected.head(20).drop(columns="kind"), hide_index=True, width="stretch")
            downloads.table(
                st, "Download all rejected rows (CSV)", c.rejected, "rejected_rows.csv", key="dl_rejected"
            )
            if c.needs_system:
                system_question()
    if len(c.flagged):
        with st.expander(f"{rows(len(c.flagged))} scored with a caveat", expanded=False):
            st.dataframe(c.flagged.head(50).drop(columns="kind"), hide_index=True, width="stretch")
            downloads.table(
                st, "Download flagged rows (CSV)", c.flagged, "flagged_rows.csv", key="dl_flagged"
            )
    if c.notes:  # the rejected and flagged rows are in the tables above
        st.info("\n".join(f"- {md(w)}" for w in c.notes))


def system_question() -> None:
    """Ask which system undotted ICD-9 codes are (never guessed); the answer sets the reading option."""
    st.warning(
        "Some codes have no dot (like **4019**). That can be diagnosis 401.9 or procedure "
        "40.19. Which code system do the files hold?"
    )
    a, b = st.columns(2)
    a.button("They are diagnoses", on_click=_set_system, args=("diagnosis",), key="sys_dx")
    b.button("They are procedures", on_click=_set_system, args=("procedure",), key="sys_proc")


def blocked_panel(blocked: TooManyRejected, upload: str | None = None) -> None:
    """An input too little of which can be scored: why, its rejected rows, and what to do. No number is shown,
    since a score of part of a file would read as the score of the file. When some rows can be scored, the
    panel offers to score them anyway (for this upload)."""
    if not isinstance(blocked, NothingScorable):
        refused_panel(blocked.each, upload, nothing_else=True)
        return
    with st.container(border=True):
        st.error(f"**No scores yet: {md(blocked.file)} has no row that can be scored.**")
        if blocked.needs_system:
            system_question()
        else:
            st.markdown(
                f"{md(blocked.summary)} Check the code system (sidebar) and, under Reading options, "
                "the document id and code columns."
            )
        if len(blocked.rejected):
            st.caption("First rejected rows")
            st.dataframe(blocked.rejected.head(20).drop(columns="kind"), hide_index=True, width="stretch")


def refused_panel(refused: list[TooManyRejected], upload: str | None, *, nothing_else: bool = False) -> None:
    """Files left unscored because too many of their rows cannot be scored: for each, how many, its main
    reasons with an example row, and the fix in the sidebar's words; then a button that scores this upload
    anyway. ``nothing_else``: no run could be scored (else the other runs are shown below)."""
    with st.container(border=True):
        names = ", ".join(md(e.file) for e in refused)
        st.error(
            f"**No scores yet: too many rows of {names} cannot be scored.**"
            if nothing_else
            else f"**Not scored: {names}.** Too many of {'its' if len(refused) == 1 else 'their'} rows cannot "
            "be scored, so no figure is shown for "
            f"{'it' if len(refused) == 1 else 'them'}; the other runs are scored as if it had not been uploaded."
        )
        for e in refused:
            r = e.rows
            head = f"**{md(e.file)}**" + (
                f": {r.rejected:,} of its {r.given:,} rows ({r.share:.1%}) cannot be scored." if r else "."
            )
            st.markdown(head)
            reasons = pd.DataFrame(
                [
                    {
                        "rows": counted(int((e.rejected["kind"].astype(str) == str(kind)).sum()), "row"),
                        "example": f"{first.file}, line {first.line}"
                        if not pd.isna(first.line)
                        else first.file,
                        "value": first.value,
                        "reason": first.reason,  # the core words reasons for everyone: no flags
                    }
                    for kind, first in _first_of_each_kind(e.rejected)
                ]
            )
            if len(reasons):
                st.dataframe(reasons, hide_index=True, width="stretch")
        if any(e.needs_system for e in refused):
            st.markdown(
                "Its codes have no dots (like **4019**), which can be a diagnosis or a procedure. Under "
                "**Reading options** in the sidebar, choose **Diagnoses** or **Procedures** for "
                f"**{md(READING_SYSTEM)}**, or answer here."
            )
            system_question()
        else:
            st.markdown(
                "Check that the file holds codes of the chosen **Code system** (sidebar) and, under "
                "**Reading options**, the document id and code columns."
            )
        if upload is not None:
            st.button(
                "Score anyway",
                key="score_anyway",
                on_click=score_anyway,
                args=(upload,),
                help="Score the rows that can be scored and leave out the others, for these files only. The "
                "figures then describe part of each file: say so wherever you report them.",
            )


READING_SYSTEM = "Undotted ICD-9 codes such as 4019 are"  # the sidebar's label of the reading option
ANYWAY = "_score_anyway"  # the uploads (by digest) the user chose to score however many rows are rejected


def score_anyway(upload: str) -> None:
    """Lift the bound on rows not scored for this upload (the "Score anyway" button)."""
    st.session_state.setdefault(ANYWAY, set()).add(upload)


def _first_of_each_kind(rejected: pd.DataFrame) -> list[tuple[str, pd.Series]]:
    """The most frequent kinds of rejected rows (at most three, as :func:`cophe_core.scoring.labels.main_reasons`),
    each with its first row."""
    if not len(rejected):
        return []
    kinds = rejected["kind"].astype(str)
    top = kinds.value_counts().head(len(main_reasons(rejected)))
    return [(kind, rejected[kinds == kind].iloc[0]) for kind in top.index]


def figure_download(fig, name: str, key: str, table=None) -> None:
    """Small buttons under a chart: the figure as a standalone interactive HTML file (made on request: it
    holds plotly.js), as SVG, PNG and PDF for a paper (7 in wide, print-sized text; each drawn on request by
    the server's browser), and with ``table`` the numbers it draws as CSV. The buttons sit in one row, each as
    wide as its words, and wrap onto a second row where a half-width column cannot hold them (fixed columns
    cut "Chart as HTML" at 1280 px)."""
    row = st.container(horizontal=True, gap="small")
    downloads.prepared(
        row,
        "Chart as HTML",
        lambda: figure_html(fig),
        f"{name}.html",
        "text/html",
        key=key,
        source=(fig,),
        **downloads.SMALL,
    )
    if static_figures_ready():
        for fmt in ("svg", "png", "pdf"):
            downloads.prepared(
                row,
                fmt.upper(),
                functools.partial(_static_figure, fig, fmt),
                f"{name}.{fmt}",
                FORMATS[fmt],
                key=f"{key}_{fmt}",
                source=(fig,),
                help=f"The chart as {fmt.upper()}, 7 inches wide with text sized for print, for a paper or "
                "a slide",
                **downloads.SMALL,
            )
    else:
        row.caption("SVG, PNG and PDF need a Chrome or Chromium browser on the server.")
    if table is not None:
        table_download(table, name, f"{key}_csv", label="Its numbers (CSV)", where=row)


def _static_figure(fig, fmt: str) -> bytes:
    """A chart for a paper: two columns wide (7 in), its text sized for print (:func:`publication`)."""
    return render(publication(fig, "two-column"), fmt)


def static_figures_ready() -> bool:
    """Whether figures can be drawn as SVG, PNG and PDF here: Kaleido installed and a browser found."""
    return importlib.util.find_spec("kaleido") is not None and find_browser() is not None


def table_download(
    table, name: str, key: str, *, label: str = "Download the whole table (CSV)", where=None
) -> None:
    """A small button: a table as CSV, cells that a spreadsheet would run as a formula defused."""
    downloads.table(where or st, label, table, f"{name}.csv", key=key, **downloads.SMALL)


def _set_system(system: str) -> None:
    st.session_state["system"] = system


DOC_PAGE = "document"  # the "One document" page
CLICK_DOC = "Click a row to open its document in One document."
#: Follows the page link to One document as soon as it is drawn: the browser's own navigation between pages,
#: which keeps the session's widgets (its uploaded files included); st.switch_page would reset them.
FOLLOW_LINK_JS = """<script>(() => {{
  const t0 = Date.now(), want = {label};
  const go = () => {{
    const a = [...document.querySelectorAll("[data-testid=stMain] a[data-testid=stPageLink-NavLink]")]
      .find(x => x.innerText.includes(want));
    if (a) a.click(); else if (Date.now() - t0 < 3000) setTimeout(go, 50);
  }};
  go();
}})();</script><span data-nonce="{nonce}"></span>"""


def follow_script(doc: str, nonce: int) -> str:
    """The script that follows the page link to ``doc`` (:data:`FOLLOW_LINK_JS`). A document id is the user's
    text: it goes in as a JavaScript string with no "<" or ">" that could end the script."""
    want = json.dumps(f"Open document {doc}").replace("<", "\\u003c").replace(">", "\\u003e")
    return FOLLOW_LINK_JS.format(label=want, nonce=int(nonce))


def open_document(doc: str, key: str) -> None:
    """Open ``doc`` on One document in this session: its page link, followed at once by the browser (a link
    to click where the browser runs no script)."""
    st.session_state["doc_id"] = str(doc)
    st.session_state["doc_filter"] = "all"  # the document list's filter might leave it out
    st.page_link(
        pages.page(DOC_PAGE), label=f"Open document {label_md(doc)} →", icon=":material/description:"
    )
    nonce = st.session_state[f"{key}_opened"] = st.session_state.get(f"{key}_opened", 0) + 1
    script = follow_script(str(doc), nonce)
    with contextlib.suppress(TypeError):  # a Streamlit whose st.html runs no script: the link stays, a click
        st.html(script, unsafe_allow_javascript=True)


def document_table(data: Any, key: str, docs: list[str], **kw: Any) -> None:
    """A table whose rows are documents (``data``, a frame or its Styler): one click on a row opens its
    document (``docs``, one id per row) on One document, in the same session. Every document gets a row of its
    own: a row listing several documents needed a second click, on one of them.

    Not a column of links (``LinkColumn``): Streamlit opens those in a new browser tab, a new session
    without the uploaded files; and not st.switch_page, which resets the session's widgets, the uploaded
    files included."""
    picked = st.dataframe(
        data, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row", key=key, **kw
    )
    rows = picked.selection.get("rows", []) if picked else []
    if rows:
        open_document(str(docs[rows[0]]), key)
