"""One document, for a review session: the documents with the most errors first, two runs side by side.

The documents come ranked by their errors (extra plus missed codes of the runs shown); Previous / Next and
the document list stay in step, and ``st.session_state["doc_id"]`` (which other pages set to open a
document) holds the one shown. Each run's codes are grouped by family, each marked in the coder's words:
correct, extra, missed, or a wrong code in the right family (with the gold code it took the place of).
An optional notes file puts the document's text beside the codes, with the gold codes' titles marked;
the notes stay in this session only.
"""

import html
import re

import numpy as np
import pandas as pd
import streamlit as st

from cophe_core import InputError
from cophe_core.base.files import MB
from cophe_core.breakdown.documents import (
    SUBSTITUTED,
    document_families,
    document_review,
    family_level,
    highlight_titles,
    rank_documents,
    read_notes,
)
from cophe_core.breakdown.substitutions import substitution_pairs
from cophe_core.metrics import on_shared_documents
from cophe_dashboard import downloads, loading, state, texts
from cophe_dashboard.components import keep_choice, md
from cophe_dashboard.errors import said

NO_RUN = ""  # run B "none": no run name is empty (the sidebar never gives one)
NOTES = "_doc_notes"  # session key of the parsed notes: {digest, name, notes} or {digest, error}
RUN_B_KEPT = "_doc_run_b"  # run B, kept while the page is not shown (its widget state is not)
NOTE_TYPES = ["csv", "tsv", "jsonl"]
NOTE_HEIGHT = 560  # pixels; a long note scrolls inside its box
# A note is shown up to this many characters (a long discharge summary has some 20,000), so that a page
# stays small whatever the file holds: 45 MB of Markdown signs once made a 236 MB message per page.
MAX_NOTE_CHARS = 100_000
_LINE_ENDS = re.compile(r"\r\n|[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]")  # CommonMark's, and Python's others

# the page's own words (texts.py holds the shared ones): (coder's, technical)
SUBSTITUTION_WORDS = ("Wrong code in the right family", "Substitution (FP + FN)")
ERRORS_WORDS = ("extra + missed codes", "FP + FN")

# one colour per status, the same on badges and table cells: correct green, extra red (as on the tree page),
# missed blue, wrong code in the right family violet
BADGE = {"correct": "green", "extra": "red", "missed": "blue", SUBSTITUTED: "violet"}
CELL = {"correct": "#d9f0d3", "extra": "#fddbc7", "missed": "#d1e5f0", SUBSTITUTED: "#e7d4e8"}
TERM_OF = {"correct": "tp", "extra": "fp", "missed": "fn"}


def pick(words: tuple[str, str]) -> str:
    return words[1] if texts.technical() else words[0]


def word(status: str) -> str:
    """A code's status in the page's words."""
    return pick(SUBSTITUTION_WORDS) if status == SUBSTITUTED else texts.term(TERM_OF[status])


def badge(status: str, label: str | None = None) -> str:
    return f":{BADGE[status]}-badge[{label or word(status)}]"


def family_status(status: str) -> tuple[str, str]:
    """A family's status ("correct", "2 extra", "1 missed") → (its kind, its words)."""
    if status == "correct":
        return "correct", word("correct")
    n, kind = status.split(" ", 1)
    return kind, f"{word(kind)} {n}"


def go(doc: str) -> None:
    st.session_state["doc_id"] = doc


def picked() -> None:
    st.session_state["doc_id"] = st.session_state["doc_pick"]


def keep_run_b() -> None:
    st.session_state[RUN_B_KEPT] = st.session_state["doc_run_b"]


def notes_changed() -> None:
    if st.session_state.get("notes_file") is None:  # the user removed the file
        st.session_state.pop(NOTES, None)


def forget_notes() -> None:
    st.session_state.pop(NOTES, None)


def choose_run_b(ctx) -> str:
    """The second run (``NO_RUN`` for none): by default the run after the sidebar's."""
    runs = ctx.scoring.run_names
    others = [r for r in runs if r != ctx.run]
    options = others + [NO_RUN]
    after = runs[runs.index(ctx.run) + 1 :] + runs[: runs.index(ctx.run)]
    default = next((r for r in after if r != ctx.run), NO_RUN)
    if st.session_state.get("doc_run_b") not in options:
        kept = st.session_state.get(RUN_B_KEPT)
        st.session_state["doc_run_b"] = kept if kept in options else default
    return st.selectbox(
        f"Beside run **{md(ctx.run)}** (chosen in the sidebar), show run",
        options,
        key="doc_run_b",
        on_change=keep_run_b,
        format_func=lambda r: r or "none: one run only",
        help="The two runs are shown side by side, and the documents are ranked by the errors of both.",
    )


def notes_upload() -> dict[str, str] | None:
    """The notes file (optional), parsed once per file and kept in this session only."""
    held = st.session_state.get(NOTES)
    with st.expander(
        "Notes: read each document's text beside its codes (optional)",
        expanded=False,
        icon=":material/article:",
    ):
        f = st.file_uploader(
            "Notes file",
            type=NOTE_TYPES,
            key="notes_file",
            on_change=notes_changed,
            max_upload_size=loading.MAX_UPLOAD_MB,
            help="CSV or TSV with the columns doc_id and text, or JSONL with one "
            '{"doc_id": …, "text": …} object per line. Up to '
            f"{loading.MAX_UPLOAD_MB} MB per file; each note is shown up to its first "
            f"{MAX_NOTE_CHARS:,} characters. The notes stay in this browser "
            "session: they are not stored and leave with it.",
        )
        if f is not None:
            raw = f.getvalue()  # its size is checked below, with the notes' own message
            digest = loading.file_digest(f.name, raw)
            if held is None or held.get("digest") != digest:
                if len(raw) > loading.MAX_UPLOAD_MB * MB:
                    held = {
                        "digest": digest,
                        "error": f"{f.name}: larger than {loading.MAX_UPLOAD_MB} MB; "
                        "upload the notes of fewer documents.",
                    }
                else:
                    try:
                        held = {"digest": digest, "name": f.name, "notes": read_notes(raw, name=f.name)}
                    except InputError as e:
                        held = {"digest": digest, "error": said(e)}
                st.session_state[NOTES] = held
        if held and "error" in held:
            st.error(md(held["error"]))
        elif held:
            n = len(held["notes"])
            st.caption(
                f"Notes of {n:,} document{'s' if n != 1 else ''} from **{md(held['name'])}**, "
                "kept in this session only."
            )
            st.button(
                "Forget the notes",
                on_click=forget_notes,
                key="notes_forget",
                type="tertiary",
                icon=":material/delete:",
            )
    return held.get("notes") if held and "notes" in held else None


FILTERS = {  # the document list's filters: key → words
    "all": "All documents",
    "swap": "A wrong code in the right family",
    "family": "Codes in a family",
    "a_right": "Run A right, run B wrong",
}


def with_swap(ev_of: dict) -> set[str]:
    """The documents in which a run shown writes a wrong code in the right family."""
    return {d for ev in ev_of.values() for d in state.memo(substitution_pairs, ev).doc_id.astype(str)}


def in_family(ev_of: dict, node: int) -> set[str]:
    """The documents with a gold or written code in family ``node`` in a run shown."""
    return {d for ev in ev_of.values() for d in ev.node_documents(node).doc_id.astype(str)}


def right_and_wrong(ev_of: dict, names: list[str]) -> set[str]:
    """The documents whose codes run A (the sidebar's) writes exactly right and run B does not."""
    a, b = (state.memo(rank_documents, {r: ev_of[r]}) for r in names)
    ok_a = set(a.doc_id[a.errors == 0].astype(str))
    return ok_a & set(b.doc_id[b.errors > 0].astype(str))


def filtered(ev_of: dict, ranked: pd.DataFrame, names: list[str]) -> pd.DataFrame | None:
    """The ranked documents the chosen filter keeps (None, with a note, when it keeps none)."""
    options = [k for k in FILTERS if k != "a_right" or len(names) == 2]
    keep_choice("doc_filter", options)
    left, right = st.columns([2, 3], vertical_alignment="bottom")
    kind = left.selectbox(
        "List the documents",
        options,
        key="doc_filter",
        format_func=lambda k: FILTERS[k] if k != "a_right" else f"Run {names[0]} right, run {names[1]} wrong",
        help="Narrow the document list: documents where a run wrote a wrong code of the right family, "
        "documents with codes of one family, or documents whose codes the sidebar's run writes exactly "
        "and the other run does not.",
    )
    if kind == "all":
        return ranked
    if kind == "swap":
        keep, what = with_swap(ev_of), "with a wrong code in the right family"
    elif kind == "a_right":
        keep, what = (
            right_and_wrong(ev_of, names),
            f"that run {md(names[0])} codes right and {md(names[1])} not",
        )
    else:
        onto = next(iter(ev_of.values())).ontology
        q = (
            right.text_input("Family code", key="doc_family", placeholder="e.g. 428 or 401-405")
            .strip()
            .upper()
        )
        hits = np.nonzero(np.asarray(onto.keys) == q)[0] if q else np.array([], dtype=np.int64)
        if not len(hits):
            right.caption(f"No code {md(q)} in this code system." if q else "Type a family's code.")
            return ranked
        keep, what = in_family(ev_of, int(hits[0])), f"with codes of family {md(q)}"
    shown = ranked[ranked.doc_id.astype(str).isin(keep)]
    if shown.empty:
        st.info(f"No document {what}. Choose another filter.", icon=":material/filter_alt_off:")
        return None
    st.caption(f"{len(shown):,} of {len(ranked):,} documents {what}.")
    return shown.reset_index(drop=True)


def navigator(ranked: pd.DataFrame, names: list[str]) -> str:
    """Previous / Next and the document list, in step through ``st.session_state["doc_id"]``."""
    order = ranked.doc_id.tolist()
    errors = dict(zip(order, ranked.errors.tolist()))
    position = {d: i for i, d in enumerate(order)}
    doc = st.session_state.get("doc_id")
    if not isinstance(doc, str) or doc not in position:
        doc = order[0]
        st.session_state["doc_id"] = doc
    i = position[doc]
    st.session_state["doc_pick"] = doc  # before the widget: the list follows the buttons and other pages
    err = pick(ERRORS_WORDS)
    prev, pick_col, nxt = st.columns([1, 5, 1], vertical_alignment="bottom")
    prev.button(
        "Previous",
        key="doc_prev",
        icon=":material/arrow_back:",
        width="stretch",
        disabled=i == 0,
        on_click=go,
        args=(order[max(i - 1, 0)],),
    )
    keep_choice("doc_pick", order)  # its labels hold the chosen runs' counts
    pick_col.selectbox(
        "Document (type to search)",
        order,
        key="doc_pick",
        on_change=picked,
        format_func=lambda d: f"{d} · {errors[d]:,} {err}",
    )
    nxt.button(
        "Next",
        key="doc_next",
        icon=":material/arrow_forward:",
        width="stretch",
        disabled=i == len(order) - 1,
        on_click=go,
        args=(order[min(i + 1, len(order) - 1)],),
    )
    runs = " and ".join(f"**{md(r)}**" for r in names)
    st.caption(
        f"Document {i + 1:,} of {len(order):,} by {err}: the documents with the most extra plus missed "
        f"codes of {runs} together come first. Here a wrong code in the right family counts as one extra "
        "and one missed code, as the scores count it."
    )
    return doc


def run_side(box, run: str, review: pd.DataFrame) -> None:
    """One run's codes of the document: a one-line count, then the codes grouped by family."""
    counts = review.status.value_counts()
    with box.container(border=True):
        st.markdown(f"#### Run {md(run)}")
        st.markdown(" · ".join(badge(s, f"{word(s)} {counts.get(s, 0)}") for s in BADGE))
        if review.empty:
            st.caption("No code in the gold standard, none written.")
            return
        lines = []
        for (fam, fam_title), rows in review.groupby(["family", "family_title"], sort=False):
            lines.append(f"**{md(fam)}** {md(fam_title)}")
            for r in rows.itertuples():
                line = f"- {badge(r.status)} **{md(r.code)}** {md(r.title)}"
                if r.instead_of:
                    line += f"  \n  instead of **{md(r.instead_of)}** {md(r.instead_of_title)}"
                lines.append(line)
            lines.append("")
        st.markdown("\n".join(lines))


_MARKDOWN_SIGNS = re.compile(r"[\\`*_\[\]{}|~$:!+\-]")  # not "#", "&" or ";", which the escapes use


def note_text(text: str) -> str:
    """Note text for HTML: escaped, then every Markdown sign as an entity and every line end as <br>, so
    that the note shows as written, on one line of Markdown (its HTML block cannot end early: "\\r\\r" is a
    blank line to Markdown), and nothing in it is read as markup.

    >>> note_text("a\\r\\r**b**\\r\\nc")
    'a<br><br>&#42;&#42;b&#42;&#42;<br>c'
    """
    text = _MARKDOWN_SIGNS.sub(lambda m: f"&#{ord(m.group())};", html.escape(text, quote=True))
    return _LINE_ENDS.sub("<br>", text)  # every line end, "\r" too: a blank line would end the HTML block


def _attribute(text: str) -> str:
    """A value for an HTML attribute on the note's one line: escaped, line ends as spaces."""
    return _LINE_ENDS.sub(" ", html.escape(text, quote=True))


def note_html(text: str, codes_of: dict[str, str]) -> str:
    """The note as safe HTML, each gold title found (:func:`highlight_titles`) in a ``<mark>``."""
    out, at = [], 0
    for start, end, title in highlight_titles(text, codes_of):
        out.append(note_text(text[at:start]))
        out.append(f'<mark title="{_attribute(codes_of[title])}">{note_text(text[start:end])}</mark>')
        at = end
    out.append(note_text(text[at:]))
    return '<div style="line-height: 1.6; overflow-wrap: anywhere;">' + "".join(out) + "</div>"


def show_note(box, doc: str, note: str, gold: pd.DataFrame) -> None:
    codes_of: dict[str, str] = {}
    for code, title in zip(gold.code, gold.title):  # title → "code title", for the tooltip
        codes_of[title] = f"{codes_of[title]}, {code}" if title in codes_of else f"{code} {title}"
    with box.container(border=True):
        st.markdown(f"#### Note of {md(doc)}")
        st.caption(
            "Marked: the titles of the gold-standard codes (or their first part), where the note has "
            "them. Hover over a mark for its code."
        )
        if len(note) > MAX_NOTE_CHARS:
            st.caption(f"This note has {len(note):,} characters: the first {MAX_NOTE_CHARS:,} are shown.")
        with st.container(height=NOTE_HEIGHT, border=False):
            st.markdown(note_html(note[:MAX_NOTE_CHARS], codes_of), unsafe_allow_html=True)


def families_tabs(ev_of: dict, doc: str) -> None:
    """One table per level: each family with its gold codes and, per run, the codes written and the status."""
    onto = next(iter(ev_of.values())).ontology
    tables = {run: document_families(ev, doc) for run, ev in ev_of.items()}
    levels = [
        lv
        for lv in next(iter(ev_of.values())).levels[1:]
        if any((t.level == lv).any() for t in tables.values())
    ]
    if not levels:
        st.caption("No family holds a code of this document.")
        return
    kind_of: dict[str, str] = {}
    for lv, tab in zip(levels, st.tabs([texts.level(onto, lv) for lv in levels])):
        merged: pd.DataFrame | None = None
        status_cols: list[str] = []
        for run, t in tables.items():
            part = t[t.level == lv][["code", "title", "gold", "status"]]
            words = [family_status(x) for x in part.status]
            kind_of.update({w: k for k, w in words})
            status = f"Status · {run}"
            part = part.assign(status=[w for _, w in words]).rename(columns={"status": status})
            merged = part if merged is None else merged.merge(part, on=["code", "title", "gold"], how="outer")
            status_cols.append(status)
        if merged is None:
            continue
        # a family only one run writes codes of: the other writes none, and the gold standard has none
        merged[status_cols] = merged[status_cols].fillna("")
        merged = merged.sort_values("code", ignore_index=True)
        shown = texts.columns(merged, {c: c for c in status_cols})  # run names are shown as written
        style = shown.style.map(
            lambda v: f"background-color: {CELL[kind_of[v]]}" if v in kind_of else "", subset=status_cols
        )
        tab.dataframe(
            style,
            hide_index=True,
            width="stretch",
            column_config={texts.term("gold"): st.column_config.NumberColumn(width="small")},
        )


def download(reviews: dict[str, pd.DataFrame], doc: str) -> None:
    rows = pd.concat(
        [r.assign(run=run, status=r.status.map(word)) for run, r in reviews.items()], ignore_index=True
    )
    rows = rows[
        ["run", "family", "family_title", "code", "title", "status", "instead_of", "instead_of_title"]
    ]
    shown = texts.columns(
        rows,
        {
            "family": "Family",
            "family_title": "Family title",
            "instead_of": "Instead of",
            "instead_of_title": "Instead of, title",
        },
    )
    downloads.table(
        st,
        "Download this document's codes (CSV)",
        shown,
        f"document_{doc}.csv",
        key="dl_doc",
        **downloads.SMALL,
    )


def page(ctx) -> None:
    left, right = st.columns([2, 3], vertical_alignment="top")
    with left:
        run_b = choose_run_b(ctx)
    with right:
        notes = notes_upload()
    names = [ctx.run] + ([run_b] if run_b != NO_RUN else [])
    own = {run: ctx.evaluation(run) for run in names}
    # each run is evaluated on its own documents: the two are shown on the union of theirs
    ev_of = state.memo(on_shared_documents, own)
    ranked = filtered(ev_of, state.memo(rank_documents, ev_of), names)
    if ranked is None:
        return
    doc = navigator(ranked, names)

    reviews = {run: document_review(ev, doc) for run, ev in ev_of.items()}
    first = reviews[ctx.run]
    gold = first[first.status != "extra"]
    gold = pd.DataFrame(
        {  # the gold codes: each row's code, or the gold code a written code replaced
            "code": gold.instead_of.where(gold.instead_of != "", gold.code),
            "title": gold.instead_of_title.where(gold.instead_of != "", gold.title),
        }
    )
    onto = ev_of[ctx.run].ontology
    fam_name = texts.level(onto, family_level(onto))
    st.markdown(
        f"**{md(doc)}** · {texts.term('gold')}: **{len(gold)}** · codes grouped by {fam_name.lower()}"
    )
    st.caption(
        " · ".join(
            [
                f"{badge('correct')} in the gold standard and written by the run",
                f"{badge('extra')} written, not in the gold standard",
                f"{badge('missed')} in the gold standard, not written",
                f"{badge(SUBSTITUTED)} written instead of a gold code of the same family, shown below it: one extra "
                "and one missed code, counted once",
            ]
        )
    )

    note = notes.get(doc) if notes else None
    widths = ([4] if note is not None else []) + [5] * len(names)
    boxes = st.columns(widths)
    if note is not None:
        show_note(boxes[0], doc, note, gold)
    elif notes:
        st.caption(f"The notes file has no note for {md(doc)}.")
    for box, run in zip(boxes[-len(names) :], names):
        run_side(box, run, reviews[run])

    with st.expander(
        "Families at each level: does the run write as many codes of each family as the gold standard?"
    ):
        st.caption(
            f"{texts.term('gold')}: the document's gold codes in the family. Per run, "
            f"{word('correct')} when the run writes as many codes of the family; otherwise how many it "
            f"writes beyond them ({word('extra')}) or leaves out ({word('missed')}). A blank: the run "
            "writes none, and the gold standard has none. This is how the right-family-and-count "
            "score sees the document."
        )
        families_tabs(ev_of, doc)
    download(reviews, doc)


def show() -> None:
    """Draw the page."""
    st.title("One document")
    ctx = state.require_scoring()
    if ctx and state.documents_needed(ctx, "One document"):
        ctx = None
    if ctx:
        page(ctx)
