"""Code-family tree: where the run writes extra codes or misses codes, family by family.

The page opens with the answer, "Where this run goes wrong": the families with the most extra and the most
missed codes at a chosen level, each one click away from its place in the tree. The tree below has the
full width, so its tiles carry their codes and titles; a click focuses a family, the path above the chart
leads back, and "Other" tiles open into the list of what they merge. Below the tree: the focused family's
children, the codes the run writes instead of the right ones, and the documents behind the family.
The browser only ever receives the focused subtree (depth-limited, small siblings folded into "Other"),
never the whole ontology.
"""

from functools import partial
from typing import Any

import pandas as pd
import streamlit as st

from cophe_core.breakdown.families import MIN_SUPPORT, family_errors, per_gold_rates
from cophe_core.breakdown.substitutions import substitution_summary, substitution_table
from cophe_core.breakdown.tree import focused_subtree
from cophe_core.ontology import family_level
from cophe_core.output.coder_report import ranked_families
from cophe_core.output.plotting import COLOUR_BY, colour_range, coloured, tree_figure
from cophe_dashboard import components, state, texts, urlstate
from cophe_dashboard.components import keep_choice, label_md, md

MAX_NODES = 2000  # the browser never gets more tiles than this (SPEC §6)
MAX_CHILDREN = 30  # per parent, largest first; the rest fold into "Other"
MIN_SHARE = (
    0.018  # so do children under 1.8% of the view: at 900 px, 16 px, the thinnest tile holding a label
)
HEIGHT = 900
DETAIL_ROWS = 100  # documents listed behind a family; the rest are one click away in the document view
RANKED = 6  # families per ranked list
RANK_WORDS = {"count": "Count", "rate": "Per 100 gold codes"}
COLOURS = ["balance", "fp", "fn", "extra_per_100", "missed_per_100", "error_share", "f1", "set_f1"]
COLOUR_WORDS = {
    "balance": "red where the run writes more extra codes than it misses, per code the family handles (correct, "
    "extra and missed), blue where it misses more, white where it is balanced",
    "fp": "darker red where the run writes more extra codes (a count, so large families stand out)",
    "fn": "darker blue where the run misses more gold codes (a count)",
    "extra_per_100": "darker red where the run writes more extra codes for every 100 gold codes of the family "
    f"(a rate, so small families count as much as large ones); grey where the family has fewer than "
    f"{MIN_SUPPORT} gold codes, too few to judge",
    "missed_per_100": "darker blue where the run misses more of every 100 gold codes of the family (a rate); "
    f"grey where the family has fewer than {MIN_SUPPORT} gold codes, too few to judge",
    "error_share": "darker where the family holds more of the run's errors",
    "f1": "yellow for a high F1 (right family and count), dark blue for a low one",
    "set_f1": "yellow for a high F1 (families only), dark blue for a low one",
}


def set_focus(node: int | None) -> None:
    state.focus_on(node, state.context().ontology)
    st.session_state.pop("other_open", None)
    st.session_state["_view"] = view() + 1  # every clickable table and the chart start unselected


def view() -> int:
    """A number that changes with every focus change, for the keys of the clickable elements: a table
    keeps its selection under the same key, so coming back to a view would leave its row selected, and a
    second click on it would unselect it instead of focusing."""
    return int(st.session_state.get("_view", 0))


def pick_row(key: str, nodes: list[int]) -> None:
    """Selection callback of a family table: the picked row focuses its node. As a callback it runs before
    the rerun, so one click costs one rerun; the tables' keys name the focus, so the new ones start
    unselected."""
    rows = st.session_state[key].selection.rows
    if rows:
        set_focus(nodes[rows[0]])


def ranked_key(name: str) -> str:
    """The key of the codes of the ranked list ``name`` (:func:`ranked_codes`): renewed when one of them is
    clicked, so that they are drawn again with none chosen, and kept at every other focus change (the ranked
    panel does not change with the focus)."""
    return f"go_{name}_{st.session_state.get('_ranked_picks', {}).get(name, 0)}"


def pick_family(key: str, name: str) -> None:
    """Callback of a ranked list's codes: the clicked code focuses its family, and the list's codes are
    renewed (:func:`ranked_key`), so that the same code focuses again after a way back."""
    node = st.session_state.get(key)
    if node is not None:
        picks = st.session_state.setdefault("_ranked_picks", {})
        picks[name] = picks.get(name, 0) + 1
        set_focus(int(node))


def ranked_codes(shown: pd.DataFrame, name: str) -> None:
    """The codes of a ranked list, in its rows' order, each one click from focusing the tree on its family.
    A clicked pill starts the rerun at once, where a table's row selection waits for more clicks first
    (Streamlit's ~150 ms), and a click on a row's title or numbers selects nothing. Codes are the user's:
    escaped for Markdown (:func:`label_md`)."""
    key = ranked_key(name)
    nodes = [int(n) for n in shown.node]
    labels = dict(zip(nodes, (label_md(c) for c in shown.code)))
    with st.container(key=f"ranked_{name}"):  # a stable class (st-key-ranked_…) for the pills, whatever key
        st.pills(
            "Focus the tree on",
            nodes,
            format_func=labels.__getitem__,
            key=key,
            on_change=pick_family,
            args=(key, name),
            help="The families of the list below, in its order: click one to focus the tree on it.",
        )


def ranked_table(shown: pd.DataFrame, key: str, column_config: dict) -> None:
    """A ranked list: its families (``node`` hidden) with their numbers as ``column_config`` writes them
    (:func:`number_column`), on rows tall enough for a title on three lines (:data:`WRAP_ROW`), the half-page
    column cutting a longer title, every row in view (a grid's own height shows five and a half). Read-only:
    the codes above it focus the tree (:func:`ranked_codes`)."""
    st.dataframe(
        shown,
        hide_index=True,
        row_height=WRAP_ROW,
        height=GRID_HEAD + WRAP_ROW * len(shown) + 2,  # and the grid's border, 1 px each side
        width="stretch",
        key=key,
        column_config=column_config,
    )


def family_table(shown: pd.DataFrame, key: str, *, wrap: bool = False, **kw) -> None:
    """A table of families (with a ``node`` column, hidden) in which a click focuses the tree; its numbers as
    its column settings write them (:func:`count_columns`). ``wrap``: rows tall enough for a title on three
    lines (:data:`WRAP_ROW`), for tables whose column cuts a title."""
    st.dataframe(
        shown,
        hide_index=True,
        row_height=WRAP_ROW if wrap else None,
        width="stretch",
        selection_mode="single-row",
        key=key,
        on_select=partial(pick_row, key, [int(n) for n in shown.node]),
        **kw,
    )


# How the page's tables write their numbers (texts.number_column): counts with separators, F1 to two decimals,
# shares as percentages (given in percent points: texts.in_percent). No column of the page is ever negative.
NUMBERS: dict[str, str | tuple[str, int]] = {
    **dict.fromkeys(
        ("gold", "predicted", "tp", "fp", "fn", "docs_over", "docs_under", "extra_per_100", "missed_per_100"),
        "count",
    ),
    **dict.fromkeys(("documents", "gold_documents", "extra", "missed"), "count"),
    "f1": ("decimal", 2),
    "set_f1": ("decimal", 2),
    "extra_share": "percent",
    "missed_share": "percent",
    "rate": "percent",
}


def number_column(col: str, label: str, **settings) -> Any:
    """The settings of column ``col``: its numbers written as :data:`NUMBERS` says."""
    return texts.number_column(label, NUMBERS[col], **settings)


# The ranked lists' columns (px) at half the page at 1280 px (385 px): the numbers' and the code's narrow, the
# title what they leave, on up to three lines (the grid stretches them all at wider pages)
RANK_NUMBER, RANK_TITLE = 60, 168
WRAP_ROW = 68  # px: Streamlit wraps a cell's text in rows taller than 4rem (64 px); three lines of a title
GRID_HEAD = 35  # px: a canvas table's header row, whatever its rows' height


def count_columns(cols: list[str]) -> dict:
    """Column settings for family tables: Code and Title pinned, counts in the page's words."""
    conf = {
        "code": st.column_config.TextColumn(texts.term("code"), pinned=True, width="small"),
        "title": st.column_config.TextColumn(texts.term("title"), pinned=True, width="medium"),
    }
    for k in ("gold", "predicted", "tp", "fp", "fn", "docs_over", "docs_under", "f1", "set_f1"):
        conf[k] = number_column(k, texts.term(k), help=texts.HELP[k])
    return {c: conf[c] for c in cols if c in conf} | {c: None for c in ("node",) if c not in cols}


def offenders(ctx, ev) -> None:
    """The ranked panel: families with the most extra and the most missed codes, and their share."""
    onto = ev.ontology
    choices = list(ev.levels[1:]) or list(ev.levels)
    fam = family_level(onto)
    default = fam if fam in choices else choices[-1]
    if st.session_state.get("rank_level") not in choices:
        st.session_state["rank_level"] = default
    keep_choice("rank_level", choices)
    with st.expander("Where this run goes wrong", expanded=True, icon=":material/troubleshoot:"):
        lv = st.selectbox(
            "Families at the level",
            choices,
            format_func=texts.labeller(texts.level, onto),
            key="rank_level",
            help=texts.HELP["level"],
        )
        rank = st.segmented_control(
            "Rank the families by",
            ["count", "rate"],
            default="count",
            key="rank_by",
            format_func=RANK_WORDS.__getitem__,
            help=f"Count: the codes summed over the documents, so large families come first. Per 100 gold "
            f"codes: how many extra (missed) codes the run writes for every 100 codes of the family in the "
            f"gold standard, so a small family coded badly comes first; families with fewer than "
            f"{MIN_SUPPORT} gold codes are left out of it.",
        )
        with st.spinner("Ranking the families…"):
            table = state.memo(family_errors, ev, lv)
            over, under = state.memo(ranked_families, ev, level=lv, min_support=MIN_SUPPORT, top=RANKED)
        left, right = st.columns(2)
        for col, count, share, rate, by_rate, head, word in (
            (left, "fp", "extra_share", "extra_per_100", over, "Most extra codes", "extra codes"),
            (right, "fn", "missed_share", "missed_per_100", under, "Most missed codes", "missed codes"),
        ):
            with col:
                if rank == "rate":
                    rate_panel(table, by_rate, count, rate, word, lv)
                else:
                    count_panel(table, count, share, head, word, lv)
        st.caption(
            "Click a family's code above its list to focus the tree on it. Counts are codes summed over the "
            "documents: a family given three codes where the gold standard has one counts two extra codes."
        )


def most(table: pd.DataFrame, count: str) -> pd.DataFrame:
    """The :data:`RANKED` families of ``table`` with the largest ``count`` (above 0), ties by code."""
    return table[table[count] > 0].sort_values([count, "code"], ascending=[False, True]).head(RANKED)


def count_panel(table: pd.DataFrame, count: str, share: str, head: str, word: str, lv: str) -> None:
    """The families with the most extra (missed) codes, with their share of the run's."""
    top = state.memo(most, table, count)
    if top.empty:
        st.markdown(f"**{head}**: none. The run has no {word} at this level.")
        return
    st.markdown(
        f"**{head}**: these {len(top)} families hold {texts.number(top[share].sum(), 'percent')} of the run's "
        f"{word}."
    )
    shown = texts.in_percent(top[["code", "title", count, share, "node"]], share)
    ranked_codes(shown, f"rank_{count}_{lv}")
    ranked_table(
        shown,
        f"rank_{count}_{lv}",
        column_config={
            # half the page at 1280 px: the title takes what the numbers leave, the code pinned
            "code": st.column_config.TextColumn(texts.term("code"), width=RANK_NUMBER, pinned=True),
            "title": st.column_config.TextColumn(texts.term("title"), width=RANK_TITLE),  # wrapped
            count: number_column(count, texts.term(count), help=texts.HELP[count], width=RANK_NUMBER),
            share: number_column(
                share,
                "Share",
                width=RANK_NUMBER,
                help=f"This family's {word} as a share of all the run's {word} at this level.",
            ),
            "node": None,
        },
    )


def rate_panel(table: pd.DataFrame, top: pd.DataFrame, count: str, rate: str, word: str, lv: str) -> None:
    """The families with the most extra (missed) codes per 100 gold codes, counts beside, among those with at
    least MIN_SUPPORT gold codes; says how many families with such codes were left out."""
    left_out = int(((table[count] > 0) & (table.gold < MIN_SUPPORT)).sum())
    note = (
        f" {left_out:,} famil{'y' if left_out == 1 else 'ies'} with {word} but fewer than {MIN_SUPPORT} gold "
        "codes are left out: too few codes to judge."
        if left_out
        else ""
    )
    if top.empty:
        st.markdown(
            f"**Most {word} per 100 gold codes**: none among the families with at least {MIN_SUPPORT} gold codes.{note}"
        )
        return
    st.markdown(
        f"**Most {word} per 100 gold codes**, among families with at least {MIN_SUPPORT} gold codes.{note}"
    )
    shown = top[["code", "title", rate, count, "gold", "node"]]
    ranked_codes(shown, f"rate_{count}_{lv}")
    ranked_table(
        shown,
        f"rate_{count}_{lv}",
        column_config={
            # half the page at 1280 px: the title takes what the numbers leave, the code pinned
            "code": st.column_config.TextColumn(texts.term("code"), width=RANK_NUMBER, pinned=True),
            "title": st.column_config.TextColumn(
                texts.term("title"), width=RANK_TITLE - RANK_NUMBER
            ),  # wrapped
            rate: number_column(
                rate,
                "Per 100",
                width=RANK_NUMBER,
                help=f"{word.capitalize()} for every 100 codes of this family in the gold standard.",
            ),
            count: number_column(count, texts.term(count), help=texts.HELP[count], width=RANK_NUMBER),
            "gold": number_column("gold", texts.term("gold"), help=texts.HELP["gold"], width=RANK_NUMBER),
            "node": None,
        },
    )


def breadcrumbs(onto, focus: int | None) -> None:
    path = onto.path(focus) if focus is not None else []
    crumbs = st.columns(min(len(path) + 1, 6), gap="small")
    crumbs[0].button(
        "All codes",
        key="crumb_root",
        on_click=set_focus,
        args=(None,),
        type="tertiary",
        icon=":material/home:",
    )
    for col, n in zip(crumbs[1:], path[-5:]):
        label = f"{onto.keys[n]} {onto.titles[n]}"  # a title is the user's: never read as Markdown
        short = label[:46] + ("…" if len(label) > 46 else "")
        col.button(
            f"› {md(short)}",
            key=f"crumb_{n}",
            on_click=set_focus,
            args=(n,),
            type="tertiary",
            help=md(label),
        )


def legend(sub: pd.DataFrame, colour: str, focus_label: str) -> None:
    """Size and colour in words, with the fitted range."""
    name, _, lo, _ = COLOUR_BY[colour]
    shown = coloured(sub)
    low, high = colour_range(shown[colour], shown["value"], signed=lo < 0)
    scale = (
        f"the scale runs from {texts.number(low, 'signed', 2)} to {texts.number(high, 'signed', 2)}, fitted to the tiles shown (the tiles that hold "
        "90% of the codes lie within it; beyond it, tiles take the end colour)"
        if lo < 0
        else f"the scale runs from 0 to {texts.number(high, 'percent')}"
        if colour == "error_share"
        else f"the scale runs from 0 to {high:,.0f} codes"
        if colour in ("fp", "fn")
        else f"the scale runs from 0 to {high:,.0f} per 100 gold codes"
        if colour in ("extra_per_100", "missed_per_100")
        else f"the scale runs 0 to {high:.2f}"
    )
    st.caption(
        f"**{md(focus_label)}**, {len(sub):,} tiles. **Size**: the family's codes in the gold standard "
        f"plus the codes the run wrote in it. **Colour** ({name.lower()}): {COLOUR_WORDS[colour]}; "
        f"{scale}. Grey **Other** tiles merge smaller families and take no colour: click one to list them. "
        "Click a tile to focus on it; click the focused tile to go up."
    )


def clicked_tile(key: str, parents: dict[int, int], focus: int | None) -> None:
    """Selection callback of the tree: a tile focuses its family, the focused tile goes up one level, and an
    "Other" tile opens its list. The chart's key names the focus and the open bucket, so the redrawn chart
    starts unselected."""
    points = st.session_state[key].selection.get("points", [])
    if not points:
        return
    clicked = str(points[0].get("id", ""))
    if clicked.startswith("n"):
        node = int(clicked[1:])
        up = parents.get(node, -1) if node == focus else node
        set_focus(None if up < 0 else int(up))
    elif clicked.startswith("other:"):
        st.session_state["other_open"] = clicked


def other_panel(ev, sub: pd.DataFrame) -> None:
    """The families an "Other" tile merges, each one click from focus."""
    bucket = st.session_state.get("other_open")
    row = sub[sub.id == bucket]
    if row.empty:
        return
    merged = list(row.iloc[0].merged)
    parent = row.iloc[0].parent_id
    where = "all codes" if parent == "root" else "this family"
    nodes = ev.nodes.set_index("node").loc[merged].reset_index()
    with st.container(border=True, key="other_panel"):
        head, close = st.columns([6, 1])
        head.markdown(
            f"**Other: the {len(merged):,} smaller families of {where}**, merged into one tile. "
            "Click one to focus on it."
        )
        close.button(
            "Close",
            key="other_close",
            on_click=st.session_state.pop,
            args=("other_open", None),
            icon=":material/close:",
        )
        cols = ["code", "title", "gold", "predicted", "fp", "fn", "f1"]
        shown = nodes[cols + ["node"]]
        family_table(
            shown,
            f"other_{bucket}_{view()}",
            height=min(300, 38 + 35 * len(shown)),
            column_config=count_columns(cols),
        )


def children(ev, focus: int | None) -> pd.DataFrame:
    """The families right below ``focus`` (None: the top level's), the largest (gold + predicted) first."""
    nodes = ev.nodes
    kids = nodes[nodes.level == ev.levels[-1]] if focus is None else nodes[nodes.parent == focus]
    return kids.assign(mass=kids.gold + kids.predicted).sort_values("mass", ascending=False)


def children_table(ev, focus: int | None, head: str) -> None:
    kids = state.memo(children, ev, focus)
    if kids.empty:
        return
    st.subheader(f"Inside {md(head)}", anchor=False)
    cols = ["code", "title", "gold", "predicted", "tp", "fp", "fn", "f1", "docs_over", "docs_under"]
    shown = kids[cols + ["node"]]
    family_table(
        shown,
        f"kids_{view()}",
        wrap=True,  # the title pinned beside the counts: on up to three lines, not cut
        height=min(480, 38 + WRAP_ROW * len(kids)),
        column_config=count_columns(cols),
    )
    st.caption(
        f"{len(kids):,} families, largest first. Click one to focus on it. Each row counts at its own "
        "level: a code written in place of a sibling counts as extra and missed in the rows of the "
        "sub-families, but not in the family that holds both."
    )


def written_instead(ctx, ev, focus: int | None, head: str) -> None:
    """Right family, wrong code: the pairs of a missed gold code and the code written instead."""
    with st.spinner("Pairing missed and written codes…"):
        table = state.memo(substitution_table, ev, family=focus)
        summary = state.memo(substitution_summary, ev)
    where = "over the whole run" if focus is None else f"in {md(head)}"
    st.subheader(f"Right family, wrong code: what the run writes instead, {where}", anchor=False)
    if table.empty:
        st.markdown("No gold code here was replaced by another code of its category.")
        return
    st.caption(
        f"Over the whole run, in {texts.number(summary['missed_share'], 'percent')} of its missed codes the run wrote another "
        "code of the same category instead: one mistake, not two (a missed code paired with an extra one in the same "
        "document and category; the closest codes are paired first)."
    )
    shown, examples = state.memo(pairs_shown, table)
    st.dataframe(
        shown[["gold", "written", "documents", "gold_documents", "rate"]],
        hide_index=True,
        width="stretch",
        row_height=WRAP_ROW,  # a code and its title, wrapped: cut, the two titles of a pair read alike
        key=f"instead_pairs_{view()}",
        column_config={
            "gold": st.column_config.TextColumn("Gold code", pinned=True, width="medium"),
            "written": st.column_config.TextColumn("Written instead", width="medium"),
            "documents": number_column(
                "documents",
                "Documents",
                width="small",
                help="Documents in which the run wrote this code instead of the gold code.",
            ),
            "gold_documents": number_column(
                "gold_documents",
                "Gold has it",
                width="small",
                help="Documents whose gold standard holds the gold code.",
            ),
            "rate": number_column(
                "rate",
                "How often",
                width="small",
                help="Documents with the swap, as a share of the documents whose gold standard holds the gold "
                "code.",
            ),
        },
    )
    st.markdown(f"**Example documents** of the {len(shown):,} pairs above, up to three each:")
    components.document_table(
        examples[["doc_id", "gold", "written"]],
        f"instead_{view()}",
        examples.doc_id.tolist(),
        row_height=WRAP_ROW,
        height=min(420, 40 + WRAP_ROW * len(examples)),
        column_config={
            "doc_id": st.column_config.TextColumn(texts.term("doc_id"), pinned=True, width="small"),
            "gold": st.column_config.TextColumn("Gold code", width="medium"),  # the two share what is left
            "written": st.column_config.TextColumn("Written instead", width="medium"),
        },
    )
    st.caption(components.CLICK_DOC)


PAIRS_SHOWN = 50  # "written instead" pairs listed


def pairs_shown(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The first :data:`PAIRS_SHOWN` pairs of a :func:`substitution_table` as the page lists them: each code
    with its title (``gold``, ``written``), the ``rate`` in percent points (:func:`texts.in_percent`); and
    their example documents, one row each (:func:`example_rows`), so that one click on a row opens it (a row
    listing several documents needed a second click, on one of them)."""
    top = table.head(PAIRS_SHOWN)
    shown = texts.in_percent(
        top.assign(
            gold=top.gold_code + " " + top.gold_title, written=top.written_code + " " + top.written_title
        ),
        "rate",
    )
    return shown, example_rows(shown)


def example_rows(pairs: pd.DataFrame) -> pd.DataFrame:
    """One row per example document of the "written instead" pairs (their ``examples``, joined with ", "),
    in the pairs' order: ``doc_id``, ``gold``, ``written``."""
    rows = pairs.assign(doc_id=pairs.examples.map(split_ids)).explode("doc_id")
    return rows[rows.doc_id.notna()][["doc_id", "gold", "written"]].reset_index(drop=True)


def split_ids(examples: str) -> list[str]:
    """The example documents of a "written instead" row, which the table joins with ", "."""
    return [d for d in str(examples).split(", ") if d]


def family_documents(ev, node: int) -> pd.DataFrame:
    """The documents in which the family ``node`` has gold or predicted codes (:meth:`node_documents`)."""
    return ev.node_documents(node)


def documents_shown(docs: pd.DataFrame, onto, which: str | None) -> tuple[pd.DataFrame, int]:
    """The documents behind a family (``docs``: :func:`family_documents`) as :func:`detail` lists them, and
    how many there are in all.

    ``which``: the documents with ``"extra codes"``, with ``"missed codes"`` (most first), or with ``"any
    codes"`` (None: any). The first :data:`DETAIL_ROWS`, each family code with its title; the difference
    written − gold split into ``extra`` and ``missed`` codes (the family counted as a whole, a document has
    one or the other: no sign to read), each listed where the choice can show it."""
    if which == "extra codes":
        docs = docs[docs.difference > 0]
    elif which == "missed codes":
        docs = docs[docs.difference < 0].sort_values("difference", kind="stable")
    titles = onto.titles

    def described(codes: list[str]) -> str:
        return "; ".join(f"{k} {titles[onto.codes[k]]}" for k in codes)

    top = docs.head(DETAIL_ROWS)
    kinds = {"extra codes": ["extra"], "missed codes": ["missed"]}.get(str(which), ["extra", "missed"])
    shown = top.assign(
        extra=top.difference.clip(lower=0),
        missed=(-top.difference).clip(lower=0),
        gold_codes=top.gold_codes.map(described),
        predicted_codes=top.predicted_codes.map(described),
    )[["doc_id", "gold", "predicted", *kinds, "gold_codes", "predicted_codes"]]
    return shown, len(docs)


def detail(ev, focus: int, *, documents: bool = True) -> None:
    """The family's counts in words, then (with ``documents``) the documents behind them."""
    onto = ev.ontology
    row = ev.nodes.set_index("node").loc[focus]
    st.subheader(
        f"{'Documents behind' if documents else 'Counts of'} {md(onto.keys[focus])} {md(onto.titles[focus])}",
        anchor=False,
    )
    t = texts.term
    st.markdown(
        f"{t('gold')}: **{row.gold:,}** · {t('predicted').lower()}: **{row.predicted:,}** · "
        f"{t('tp').lower()} **{row.tp:,}**, {t('fp').lower()} **{row.fp:,}**, {t('fn').lower()} **{row.fn:,}**. "
        f"The run writes too many of these codes in **{row.docs_over:,}** documents and too few in "
        f"**{row.docs_under:,}**. Counted for the family as a whole: a code written in place of another code "
        "of this family is neither extra nor missed here."
    )
    if not documents:
        return
    which = st.segmented_control(
        "Show the documents with",
        ["extra codes", "missed codes", "any codes"],
        default="extra codes" if row.fp >= row.fn else "missed codes",
        key=f"detail_kind_{focus}",
    )
    docs = state.memo(family_documents, ev, focus)
    shown, n_docs = state.memo(documents_shown, docs, onto, which)
    components.document_table(
        shown,
        f"detail_{view()}_{which}",
        shown.doc_id.astype(str).tolist(),
        column_config={
            "doc_id": st.column_config.TextColumn("Document", pinned=True),
            "gold": number_column("gold", t("gold")),
            "predicted": number_column("predicted", t("predicted")),
            "extra": number_column(
                "extra", t("fp"), help="Codes of this family the run wrote in this document beyond the gold's"
            ),
            "missed": number_column(
                "missed",
                t("fn"),
                help="Codes of this family in this document's gold that the run did not write",
            ),
            "gold_codes": st.column_config.TextColumn("Gold codes in this family", width="large"),
            "predicted_codes": st.column_config.TextColumn("Codes written in this family", width="large"),
        },
    )
    st.caption(
        f"{n_docs:,} documents; the first {min(n_docs, DETAIL_ROWS)} are listed. Click one to open it "
        "in the document view, which ranks every document by its errors."
    )


def find_box(onto, col) -> None:
    query = col.text_input(
        "Find a code or family", key="tree_find", placeholder="e.g. 428 or 428.2 or 401-405"
    )
    if not query:
        return
    q = query.strip().upper()
    hits = [n for n, k in enumerate(onto.keys) if k == q]
    if not hits:
        col.caption(f"No code {md(q)} in this code system.")
    elif st.session_state.get("_last_find") != q:
        set_focus(hits[0])
        st.session_state["_last_find"] = q


def tiles_table(sub: pd.DataFrame) -> pd.DataFrame:
    """The numbers the tree draws, as its CSV download holds them (without the lists "Other" tiles merge)."""
    return sub.drop(columns="merged")


def show() -> None:
    """Draw the page."""
    st.title("Code-family tree")
    ctx = state.require_scoring()
    if ctx:
        # The tree is scored up to the top level (chapters), whatever the sidebar's highest level: a family's
        # counts do not depend on it, and chapters give the root view tiles large enough to be read.
        ev = ctx.evaluation(ctx.run, max_level=ctx.ontology.levels[-1])
        onto = ev.ontology
        urlstate.resolve_focus(onto)
        urlstate.bind("colour", "tree_colour", COLOURS)
        offenders(ctx, ev)

        st.subheader(f"The code families of run {md(ctx.run)}", anchor=False)
        a, b, c = st.columns([2, 2, 3])
        colour = a.selectbox(
            "Colour by",
            COLOURS,
            format_func=lambda k: COLOUR_BY[k][0],
            key="tree_colour",
            help=" ".join(texts.HELP[k] for k in ("balance", "fp", "fn", "error_share", "f1", "set_f1"))
            + f" Per 100 gold codes: extra (missed) codes for every 100 codes of the family in the gold standard; "
            f"families with fewer than {MIN_SUPPORT} gold codes stay grey.",
        )
        depth = b.slider("Levels shown below the focus", 1, 3, 2, key="tree_depth")
        find_box(onto, c)

        focus = st.session_state.get("focus")
        if focus is not None and focus not in set(ev.nodes.node):
            focus = None
        head = "all codes" if focus is None else f"{onto.keys[focus]} {onto.titles[focus]}"
        breadcrumbs(onto, focus)
        with st.spinner("Drawing the tree…"):
            sub = state.memo(
                focused_subtree,
                ev.nodes,
                onto,
                focus,
                depth=depth,
                max_children=MAX_CHILDREN,
                max_nodes=MAX_NODES,
                min_share=MIN_SHARE,
            )
            # extra and missed codes per 100 gold codes, for the colours that show them; kept, so that the
            # figure, kept by this very table, is drawn once and not on every rerun
            sub = state.memo(per_gold_rates, sub)
            words = {
                k: texts.term(k)
                for k in ("gold", "predicted", "tp", "fp", "fn", "f1", "set_f1", "error_share")
            }
            fig = state.memo(tree_figure, sub, colour, words=words, height=HEIGHT)  # the words: in the key
        chart_key = f"tree_{ctx.run}_{view()}_{colour}_{depth}_{st.session_state.get('other_open')}"
        parents = {int(n): int(onto.parent[n]) for n in sub.node[sub.node >= 0]}
        st.plotly_chart(
            fig,
            key=chart_key,
            on_select=partial(clicked_tile, chart_key, parents, focus),
            selection_mode="points",
            config={"displayModeBar": False},
        )
        legend(sub, colour, "All codes" if focus is None else head)
        components.figure_download(
            fig, f"tree_{ctx.run}", f"dl_tree_{focus}", table=state.memo(tiles_table, sub)
        )
        other_panel(ev, sub)
        children_table(ev, focus, head)
        if ctx.aggregate is None:
            written_instead(ctx, ev, focus, head)
        else:
            st.caption(
                "Which code the run writes instead of a missed one, and the documents behind each family, need "
                "each document's codes: an aggregate analysis holds counts only."
            )
        if focus is not None:
            detail(ev, focus, documents=ctx.aggregate is None)
