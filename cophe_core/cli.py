"""Command line: ``cophe score --gold G --pred P`` (also ``python -m cophe_core``), ``cophe compare --gold G
--run NAME=P … [--baseline NAME]``, ``cophe aggregate --gold G --run NAME=P … --out FILE.cophe`` and
``cophe dashboard``.

Argument parsing and printing only; the work is done by :mod:`cophe_core.api`.
Exit codes: 0 on success, 2 on bad input (message on stderr).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from . import __version__
from .api import Decision, decide_run, score_files, score_labels
from .base.files import InputError, excerpt
from .base.options import OPTIONS
from .inputs.datasets import DEFAULT_CHUNK_ROWS, is_dataset
from .inputs.readers import RawScores, read_input, read_labels
from .metrics import Evaluation, Figures
from .ontology import NAMES
from .scoring.labels import DEFAULT_MAX_REJECTED, RowBound, TooManyRejected

__all__ = ["main"]


def _count(text: str) -> int:
    """A whole number ≥ 0 (``--bootstrap``, ``--seed``)."""
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


def _positive(text: str) -> int:
    """A whole number ≥ 1 (``--top-k``)."""
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def _probability(text: str) -> float:
    """A number in [0, 1] (``--threshold``); NaN is not one."""
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise ValueError(text)
    return value


def _bound(max_rejected: float | None) -> RowBound:
    """``--max-rejected``: the default bound (1%, and undotted codes need ``--system``), or the user's share."""
    return RowBound() if max_rejected is None else RowBound.lifted(max_rejected)


def _max_rejected(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-rejected",
        type=_probability,
        default=None,
        metavar="SHARE",
        help=f"the share (0 to 1) of a file's rows that may be rejected before the file is refused with "
        f"exit code 2 and no score (default {DEFAULT_MAX_REJECTED:g}; undotted ICD-9 codes refuse it at any "
        "share until --system says what they are); give a larger share to score the other rows anyway",
    )


_count.__name__ = "whole number ≥ 0"  # argparse names the type in its one-line error
_positive.__name__ = "whole number ≥ 1"
_probability.__name__ = "number from 0 to 1"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="cophe",
        description="Flat, set-based and CoPHE (count-preserving hierarchical) evaluation "
        "of multi-label code assignments.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("score", help="score one prediction file against a gold standard")
    s.add_argument(
        "--gold",
        required=True,
        help="gold labels (CSV/TSV, PSV, JSON, JSONL, Parquet), or a folder or glob of Parquet/CSV files "
        "(scored streamed)",
    )
    s.add_argument("--pred", required=True, help="predicted labels, any input --gold takes")
    s.add_argument(
        "--ontology",
        default="auto",
        help="icd9, icd10cm, icd10pcs, icd10 (CM + PCS), auto (detect from the codes; default), "
        "or the path of a hierarchy file (CSV child,parent[,title] or CoPHE JSON)",
    )
    s.add_argument(
        "--max-level",
        default=None,
        help="highest level evaluated and summed into 'overall' (default: the ontology's, block for ICD)",
    )
    s.add_argument(
        "--system",
        default="auto",
        choices=["auto", "diagnosis", "procedure"],
        help="ICD-9: which table undotted codes (4019) come from; required for them",
    )
    _max_rejected(s)
    s.add_argument("--format", default="table", choices=["table", "json"], help="output format")
    s.add_argument("--nodes", metavar="FILE.csv", help="write the per-node table to this CSV")
    s.add_argument("--documents", metavar="FILE.csv", help="write the per-document table to this CSV")
    s.add_argument("--rejected", metavar="FILE.csv", help="write every rejected input row to this CSV")
    s.add_argument(
        "--metrics",
        choices=["cophe", "suite"],
        default="cophe",
        help="suite: add the ICM paper's metrics (label-, example-based, propensity F, HF, ICM)",
    )
    s.add_argument(
        "--bootstrap",
        type=_count,
        default=0,
        metavar="N",
        help="add percentile confidence intervals from N document resamples (e.g. 1000)",
    )
    s.add_argument("--seed", type=_count, default=0, help="seed of the resampling (default 0)")
    s.add_argument(
        "--threshold",
        type=_probability,
        help="when --pred holds scores: predict codes scoring at least T (0 to 1)",
    )
    s.add_argument(
        "--top-k", type=_positive, help="when --pred holds scores: predict each document's K best codes"
    )
    s.add_argument(
        "--tune-on",
        nargs=2,
        metavar=("DEV_GOLD", "DEV_SCORES"),
        help="when --pred holds scores: use the threshold that maximises CoPHE overall F1 on this "
        "development split (never tune on the test set)",
    )
    s.add_argument(
        "--save",
        metavar="FILE.cophe",
        help="also write a saved analysis (one zip file): the gold and prediction files as given, the "
        "reading options and the decision rule; open it in the dashboard (Source: Open a saved "
        "analysis) or hand it to a colleague (format: docs/analysis-format.md)",
    )
    s.add_argument(
        "--stream",
        action="store_true",
        help="score in chunks of documents, in bounded memory (automatic when --gold or --pred is a folder "
        "or a glob of Parquet or CSV files, hive partitions included)",
    )
    s.add_argument(
        "--chunk-rows",
        type=_positive,
        default=DEFAULT_CHUNK_ROWS,
        metavar="N",
        help=f"streamed scoring: rows read and counted at a time (default {DEFAULT_CHUNK_ROWS:,}); memory "
        "grows with it",
    )
    s.add_argument("--doc-col", help="document id column (default: detected)")
    s.add_argument("--code-col", help="code column (default: detected)")
    _header_argument(s)
    s.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    _compare_parser(sub)
    _aggregate_parser(sub)
    _figure_parser(sub)
    _report_parser(sub)
    sub.add_parser(
        "dashboard",
        help="start the dashboard (streamlit run dashboard/app.py); other options go to Streamlit, "
        "such as --server.port 8502",
    )
    return p


def _named_run(text: str) -> tuple[str, str]:
    """``NAME=PATH``, or a path alone (named by its file's stem)."""
    name, sep, path = text.partition("=")
    if not sep or "/" in name or os.path.exists(text):  # a path with "=" in it: hive's year=2024/
        name, path = Path(text.rstrip("/")).stem or "run", text
    if not name.strip() or not path:
        raise argparse.ArgumentTypeError(f"{excerpt(text, 60)}: give NAME=PATH, such as model_a=preds_a.csv")
    return name.strip(), path


def _edges(text: str) -> tuple[int, ...] | None:
    if text.strip().lower() == "none":
        return None
    try:
        edges = tuple(int(p) for p in text.replace(";", ",").split(",") if p.strip())
    except ValueError:
        edges = ()
    if not edges or any(e <= 0 for e in edges) or list(edges) != sorted(set(edges)):
        raise argparse.ArgumentTypeError(
            f"{excerpt(text, 40)}: give increasing whole numbers of documents, such as 10,100, or none"
        )
    from .breakdown.slices import MAX_EDGES  # here: cophe score never slices

    if len(edges) > MAX_EDGES:  # each edge is one more slice counted in every run
        raise argparse.ArgumentTypeError(f"{len(edges):,} edges: give at most {MAX_EDGES}, such as 10,100")
    return edges


class Subcommands(Protocol):
    """What ``ArgumentParser.add_subparsers()`` returns, as far as the command builders use it (argparse's
    own class for it is private)."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser: ...


def _compare_parser(sub: Subcommands) -> None:
    c = sub.add_parser(
        "compare",
        help="compare runs against one gold standard: intervals, tests against a baseline (Holm) and the "
        "families that changed (Benjamini–Hochberg)",
        description="Score two or more runs against a gold standard and compare them, as the dashboard's "
        "Compare page does: every run's figures with 95% intervals and its difference from the baseline, "
        "tested (p-values corrected by Holm); then the baseline against one other run in depth (paired "
        "tests of the headline figures, and the families that changed, Benjamini–Hochberg at 5%).",
    )
    c.add_argument("--gold", required=True, help="gold labels, any file cophe score takes")
    c.add_argument(
        "--run",
        required=True,
        action="append",
        type=_named_run,
        metavar="NAME=PATH",
        help="a run's predictions (code sets); repeat for each run, two or more",
    )
    c.add_argument(
        "--baseline", metavar="NAME", help="the run every other run is compared with (default: the first)"
    )
    c.add_argument(
        "--versus",
        metavar="NAME",
        help="the run compared in depth with the baseline (default: the first other run)",
    )
    c.add_argument(
        "--bootstrap",
        type=_positive,
        default=1000,
        metavar="N",
        help="document resamples for the intervals and tests (default 1000)",
    )
    c.add_argument("--seed", type=_count, default=0, help="seed of the resampling (default 0)")
    c.add_argument(
        "--format",
        default="table",
        choices=["table", "json", "csv"],
        help="table (default), json (everything), or csv (the runs table)",
    )
    c.add_argument("--families", metavar="FILE.csv", help="also write the whole family table to this CSV")
    _reading_arguments(c)


def _reading_arguments(p: argparse.ArgumentParser, *, max_level: str = "as for cophe score") -> None:
    """The options every command but ``score`` shares with it (how inputs are read and placed), each said once."""
    p.add_argument("--ontology", default="auto", help="as for cophe score")
    p.add_argument(
        "--system", default="auto", choices=["auto", "diagnosis", "procedure"], help="as for cophe score"
    )
    p.add_argument("--max-level", default=None, help=max_level)
    _max_rejected(p)
    p.add_argument("--doc-col", help="document id column (default: detected)")
    p.add_argument("--code-col", help="code column (default: detected)")
    _header_argument(p)
    p.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")


def _aggregate_parser(sub: Subcommands) -> None:
    a = sub.add_parser(
        "aggregate",
        help="write an aggregate analysis (counts, not codes) of runs too large to upload, for the dashboard",
        description="Score one or more runs against a gold standard, in memory or streamed, and write the "
        "counts the dashboard's views need (per-node counts, per-document counts, code-frequency slices, the "
        "ontology and its titles) to one .cophe file (format: docs/analysis-format.md). Open it in the "
        "dashboard: Source, Open a saved analysis.",
    )
    a.add_argument(
        "--gold", required=True, help="gold labels: a file, or a folder or glob of Parquet/CSV files"
    )
    a.add_argument(
        "--run",
        required=True,
        action="append",
        type=_named_run,
        metavar="NAME=PATH",
        help="a run's predictions (code sets), any input --gold takes; repeat for each run",
    )
    a.add_argument("--out", required=True, metavar="FILE.cophe", help="the aggregate analysis to write")
    _reading_arguments(a, max_level="the level shown by default (every level is kept)")
    a.add_argument(
        "--slice-edges",
        type=_edges,
        default=(10, 100),
        metavar="E1,E2",
        help="code-frequency slices of the gold standard to count (default 10,100: rare, medium and frequent "
        "codes), or none",
    )
    a.add_argument("--stream", action="store_true", help="score in chunks (automatic for folders and globs)")
    a.add_argument(
        "--chunk-rows", type=_positive, default=DEFAULT_CHUNK_ROWS, metavar="N", help="as for cophe score"
    )


def _runs_arguments(p: argparse.ArgumentParser, out: str) -> None:
    """The inputs ``cophe figure`` and ``cophe report`` share: a gold file, named runs, the reading options."""
    p.add_argument("--gold", required=True, help="gold labels (CSV/TSV, PSV, JSON, JSONL, Parquet)")
    p.add_argument(
        "--run",
        required=True,
        action="append",
        type=_named_run,
        metavar="NAME=PATH",
        help="a run's predictions (code sets); repeat for each run",
    )
    p.add_argument("--out", required=True, metavar=out, help="the file to write; its ending says the format")
    p.add_argument(
        "--baseline", metavar="NAME", help="the run the others are compared with (default: the first)"
    )
    _reading_arguments(p)


def _figure_parser(sub: Subcommands) -> None:
    from .output.figures_export import KINDS, WIDTHS

    f = sub.add_parser(
        "figure",
        help="write a figure for a paper as SVG, PNG or PDF",
        description="Draw one figure of the runs at a journal's column width (3.5 in for one column, 7 in for "
        "two), with fonts legible at that size: levels (scores by level, a panel per run), compare (each "
        "level's difference between the baseline and the second run), tree (the first run's code families) "
        "or families (the first run's families with most extra and missed codes). Needs a Chrome or "
        "Chromium browser (BROWSER_PATH names one; Debian's chromium-headless-shell is found by itself).",
    )
    f.add_argument("kind", choices=KINDS, help="which figure")
    _runs_arguments(f, "F.svg|png|pdf")
    f.add_argument("--width", default="one-column", choices=list(WIDTHS), help="default one-column (3.5 in)")
    f.add_argument("--statistic", default="f1", choices=["f1", "precision", "recall"], help="levels, compare")
    f.add_argument("--level", help="families: the level of the families (default: the highest)")
    f.add_argument("--top", type=_positive, help="families: how many (default 10 in one column, 12 in two)")


def _report_parser(sub: Subcommands) -> None:
    r = sub.add_parser(
        "report",
        help="write a table of the runs' scores for a paper (LaTeX, Markdown, CSV, HTML or PDF)",
        description="Score every run against the gold standard and write runs × levels × measures: values to "
        "3 decimals with 95% bootstrap intervals, marked (*) where a run differs from the baseline (paired "
        "bootstrap, Holm-adjusted), the best run of each row in bold.",
    )
    _runs_arguments(r, "F.tex|md|csv|html|pdf")
    r.add_argument(
        "--kind",
        default="paper",
        choices=["paper", "coder"],
        help="paper: the table of scores (default); coder: for a coding manager, each run's families over- "
        "and under-coded, the codes written instead and example documents (.html or .pdf, A4)",
    )
    r.add_argument(
        "--min-support",
        type=_positive,
        default=10,
        metavar="N",
        help="coder: gold codes a family needs to be ranked (default 10)",
    )
    r.add_argument(
        "--statistic",
        action="extend",
        type=_statistics,
        metavar="f1,precision,recall",
        help="which statistics at every level, comma-separated or repeated (default f1)",
    )
    r.add_argument("--bootstrap", type=_positive, default=1000, metavar="N", help="resamples (default 1000)")
    r.add_argument("--seed", type=_count, default=0, help="seed of the resampling (default 0)")


def _statistics(text: str) -> list[str]:
    """``--statistic``: one or more of precision, recall and f1, comma-separated."""
    said = [s.strip().lower() for s in text.split(",") if s.strip()]
    wrong = [s for s in said if s not in ("precision", "recall", "f1")]
    if wrong or not said:
        raise argparse.ArgumentTypeError(
            f"{', '.join(wrong) or repr(text)}: give f1, precision or recall, comma-separated (f1,precision,recall)"
        )
    return said


def _header_argument(p: argparse.ArgumentParser) -> None:
    """``--header`` / ``--no-header``: whether the first row of each CSV/TSV input names its columns."""
    p.add_argument(
        "--header",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the first row of each CSV/TSV input names its columns (--header) or is data (--no-header, as in "
        "the shared tasks' two-column case_id<TAB>code files); default: decided per file from its first row",
    )


def _aggregate(args: argparse.Namespace) -> int:
    """``cophe aggregate``: every run scored (streamed when asked or when a source is a dataset, each run with
    the ontology the previous one returned, so that their nodes agree), then one aggregate file written."""
    from .scale.aggregate import aggregate_of, aggregate_scoring, write_aggregate

    runs = dict(args.run)
    if len(runs) != len(args.run):
        print("cophe: error: --run: two runs have the same name; name each NAME=PATH", file=sys.stderr)
        return 2
    if os.path.isdir(args.out):
        print(
            f"cophe: error: --out {args.out}: is a folder; give the path of the file to write",
            file=sys.stderr,
        )
        return 2
    if not os.path.isdir(os.path.dirname(os.path.abspath(args.out))):
        print(
            f"cophe: error: --out {args.out}: no such folder; give a path in a folder that exists",
            file=sys.stderr,
        )
        return 2
    sources = {r: {"gold": Path(args.gold).name, "pred": Path(p).name} for r, p in runs.items()}
    options = {
        "ontology": args.ontology if args.ontology in ("auto", *NAMES) else "custom",
        "system": args.system,
    }
    try:
        if args.stream or is_dataset(args.gold) or any(is_dataset(p) for p in runs.values()):
            from .scale.pipeline import score_dataset  # here: the in-memory path needs no pyarrow.dataset

            evs = {}
            ontology: Any = args.ontology
            for run, path in runs.items():
                evs[run] = score_dataset(
                    args.gold,
                    path,
                    ontology=ontology,
                    system=args.system,
                    doc_col=args.doc_col,
                    code_col=args.code_col,
                    header=args.header,
                    chunk_rows=args.chunk_rows,
                    slice_edges=args.slice_edges,
                    every_level=True,
                    bound=_bound(args.max_rejected),
                )
                ontology = evs[run].ontology
            onto = ontology
            agg = aggregate_of(
                evs,
                max_level=onto.top_level(args.max_level),
                slice_edges=args.slice_edges,
                options=options,
                sources=sources,
            )
        else:
            scoring = score_files(
                args.gold,
                runs,
                ontology=args.ontology,
                system=args.system,
                doc_col=args.doc_col,
                code_col=args.code_col,
                bound=_bound(args.max_rejected),
                header=args.header,
            )
            if scoring.refused:  # an aggregate holds the runs asked for, or none: never a file missing one
                raise TooManyRejected.together(list(scoring.refused.values()))
            agg = aggregate_scoring(
                scoring,
                max_level=args.max_level,
                slice_edges=args.slice_edges,
                options=options,
                sources=sources,
            )
        write_aggregate(agg, args.out)
    except TooManyRejected as e:  # each file refused, its reasons and the fix: the whole message
        print(f"cophe: error: {e}", file=sys.stderr)
        return 2
    except (InputError, ValueError, KeyError) as e:
        print(f"cophe: error: {excerpt(e, 300)}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"cophe: error: --out {args.out}: {e.strerror or e}", file=sys.stderr)
        return 2
    for run in agg.run_names:
        for w in agg.warnings.get(run, []):
            print(f"cophe: warning: {run}: {w}", file=sys.stderr)
        f1 = agg.evaluation(run).score("cophe").f1
        print(f"{run}: {agg.n_documents:,} documents, CoPHE F1 up to {agg.max_level} {f1:.4f}")
    print(
        f"wrote {args.out} ({os.path.getsize(args.out):,} bytes); open it in the dashboard (Source: Open a saved analysis)"
    )
    return 0


# cophe is not on a package index: its extras are installed from a checkout (the README's install).
DASHBOARD_INSTALL = 'pip install ".[dashboard]" in the folder of a cophe checkout'


def dashboard_app() -> Path | None:
    """The dashboard's main script: a checkout's ``dashboard/app.py`` beside this package (an edit there is
    what runs), else the installed ``cophe_dashboard`` package's own ``app.py`` (a wheel); None when neither is
    there. Each has its ``.streamlit/config.toml`` beside it. Found without importing it: it imports Streamlit.

    >>> dashboard_app().name
    'app.py'
    """
    spec = importlib.util.find_spec("cophe_dashboard")
    installed = [Path(p) for p in spec.submodule_search_locations or []] if spec is not None else []
    for folder in (Path(__file__).resolve().parents[1] / "dashboard", *installed):
        if (folder / "app.py").is_file():
            return folder / "app.py"
    return None


def _dashboard(options: list[str]) -> int:
    """``streamlit run`` on the dashboard, in a child process (this package never imports Streamlit). Its
    configuration, ``.streamlit/config.toml`` beside the script, applies wherever it is started from."""
    app = dashboard_app()
    if app is None:
        print(
            "cophe: error: the dashboard is not installed with this cophe; reinstall it from a checkout "
            f"of cophe: {DASHBOARD_INSTALL}",
            file=sys.stderr,
        )
        return 2
    if importlib.util.find_spec("streamlit") is None:
        print(f"cophe: error: the dashboard needs Streamlit: {DASHBOARD_INSTALL}", file=sys.stderr)
        return 2
    return _run_forwarding_signals([sys.executable, "-m", "streamlit", "run", str(app), *options])


def _run_forwarding_signals(command: list[str]) -> int:
    """Run ``command`` as a child and return its exit status, passing on SIGTERM, SIGINT and SIGHUP: stopping
    ``cophe dashboard`` (a service manager's SIGTERM, Ctrl-C, ``kill``) stops the server it started, where
    the child used to keep running, holding its port. A child ended by a signal gives 128 + its number."""
    child = subprocess.Popen(command)

    def forward(signum: int, _frame: Any) -> None:
        if child.poll() is None:
            child.send_signal(signum)

    wanted = [signal.SIGTERM, signal.SIGINT] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])
    main_thread = threading.current_thread() is threading.main_thread()  # only it may set handlers
    previous = {s: signal.signal(s, forward) for s in wanted} if main_thread else {}
    try:
        code = child.wait()  # resumed after each forwarded signal, until the child has ended
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if child.poll() is None:  # an error here: never leave the server behind
            child.kill()
            child.wait()
    return 128 - code if code < 0 else code


def _table(result: dict[str, Any]) -> str:
    lines = [
        f"{result['documents']} documents, ontology {result['ontology']}, "
        f"levels {', '.join(result['levels'])}"
    ]
    if result.get("code_sets"):
        lines.append("code sets: " + "; ".join(f"{k} ({v})" for k, v in result["code_sets"].items()))
    lines.append("")
    w = max(8, *map(len, result["levels"]))  # the level column as wide as its longest name (PCS: body_system)
    head = f"{'measure':<10} {'level':<{w}} {'TP':>8} {'FP':>8} {'FN':>8} {'P':>7} {'R':>7} {'F1':>7}"
    lines += [head, "-" * len(head)]

    def row(measure: str, level: str, s: dict[str, Any]) -> str:
        # a level holding no code at all (no gold, no predicted code) has nothing to score: "–", not 0.000
        empty = s["tp"] + s["fp"] + s["fn"] == 0
        figures = " ".join(
            f"{'–' if empty else format(s[k], '.3f'):>7}" for k in ("precision", "recall", "f1")
        )
        return f"{measure:<10} {level:<{w}} {s['tp']:>8} {s['fp']:>8} {s['fn']:>8} {figures}"

    sections = [("", result)] + [(f"{name}: ", part) for name, part in result.get("systems", {}).items()]
    for prefix, part in sections:
        if prefix:
            lines += ["", prefix.rstrip(": ")]
        lines.append(row("flat", "leaf", part["flat"]))
        for measure in ("set_based", "cophe"):
            for level, s in part[measure]["levels"].items():
                lines.append(row(measure, level, s))
            lines.append(row(measure, "overall", part[measure]["overall"]))
    if "suite" in result:
        lines += ["", "suite: " + ", ".join(f"{k} {v:.3f}" for k, v in result["suite"].items())]
    if "intervals" in result:
        ci = result["intervals"]["figures"]
        lines += [
            "",
            f"95% intervals ({result['intervals']['resamples']} resamples): "
            + ", ".join(
                f"{k} [{lo:.3f}, {hi:.3f}]"
                for k, (lo, hi) in ci.items()
                if "overall f1" in k or k == "flat f1"
            ),
        ]
    if "decision" in result:
        d = result["decision"]
        rule = f"threshold {d['threshold']}" if d["threshold"] is not None else f"top {d['top_k']}"
        tuned = f" (tuned on {d['tuned_on']['gold']})" if "tuned_on" in d else ""
        lines += [
            "",
            f"decisions: {rule}{tuned}; " + ", ".join(f"{k} {v:.3f}" for k, v in d["ranking"].items()),
        ]
    if result["warnings"]:
        lines += ["", "warnings:"] + [f"  - {w}" for w in result["warnings"]]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args, rest = parser.parse_known_args(argv)
    if args.command == "dashboard":
        return _dashboard(rest)  # Streamlit's own options, as `streamlit run` takes them
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        commands = {"aggregate": _aggregate, "compare": _compare, "figure": _figure, "report": _report}
        return commands.get(args.command, _score)(args)
    except RecursionError:
        print(
            "cophe: error: an input is nested too deeply to read (JSON within JSON, thousands deep); "
            "give one object per document",
            file=sys.stderr,
        )
    except MemoryError:
        print(
            "cophe: error: out of memory reading or scoring the inputs; split them, or score on a "
            "machine with more memory",
            file=sys.stderr,
        )
    except Exception as e:  # the last resort: one line, never a traceback, unless asked for
        if args.debug:
            raise
        print(
            f"cophe: error: unexpected {type(e).__name__}: {excerpt(e, 200)} (run with --debug for the "
            "traceback, and report it)",
            file=sys.stderr,
        )
    return 2


def _outputs_ok(args: argparse.Namespace) -> bool:
    """Every output file goes to a folder that exists: said before any work, in one line."""
    for option in ("nodes", "documents", "rejected", "save", "families"):
        path = getattr(args, option, None)
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            print(
                f"cophe: error: --{option} {path}: no folder {os.path.dirname(path)!r}; give a path in a "
                "folder that exists",
                file=sys.stderr,
            )
            return False
    return True


@dataclass
class _Scored:
    """One ``cophe score``, in memory or streamed: the evaluation (:class:`~cophe_core.metrics.Figures`) and what
    is reported beside it."""

    ev: Figures
    warnings: list[str]
    rejected: pd.DataFrame
    rows: dict[str, Any]
    detection: str | None = None
    suite: dict[str, float] | None = None
    decision: Decision | None = None


def _score(args: argparse.Namespace) -> int:
    """``cophe score``: the inputs scored in memory or, for a folder, a glob or ``--stream``, in chunks
    (:func:`cophe_core.scale.pipeline.score_dataset`); one JSON and table, warnings and CSV outputs either way."""
    if not _outputs_ok(args):
        return 2
    streamed = args.stream or is_dataset(args.gold) or is_dataset(args.pred)
    refused = _not_streamed(args) if streamed else None
    if refused:
        print(f"cophe: error: {_NOT_STREAMED[refused]}", file=sys.stderr)
        return 2
    try:
        scored = _streamed(args) if streamed else _in_memory(args)
    except (InputError, ValueError) as e:
        if isinstance(e, TooManyRejected) and args.rejected:  # the rows at fault, when they matter most
            _write_csv(e.rejected, args.rejected)
        print(f"cophe: error: {e}", file=sys.stderr)
        return 2
    ev = scored.ev
    result = {"version": __version__, **ev.to_dict()}  # the cophe that made the figures
    if scored.suite is not None:
        result["suite"] = scored.suite
    if args.bootstrap:
        from .breakdown.stats import bootstrap  # here: only --bootstrap needs the resampling

        ci = bootstrap(ev, n_resamples=args.bootstrap, seed=args.seed, with_suite=args.metrics == "suite")
        result["intervals"] = _intervals(ci, args)
    if scored.decision is not None:
        result["decision"] = scored.decision.to_dict()
    result["rows"] = scored.rows
    result["warnings"] = scored.warnings
    if scored.detection:
        print(f"cophe: ontology {result['ontology']} {scored.detection}", file=sys.stderr)
    if args.nodes:
        _write_csv(ev.nodes, args.nodes)
    if args.documents:
        _write_csv(ev.documents, args.documents)
    if args.rejected:
        _write_csv(scored.rejected, args.rejected)
    if args.save:
        try:
            _save(args, ev, scored.decision)
        except OSError as e:
            print(
                f"cophe: error: --save {args.save}: {e.strerror or e}; give a path in a folder that exists",
                file=sys.stderr,
            )
            return 2
        except ValueError as e:  # inputs a saved analysis cannot hold (too many or too large)
            print(f"cophe: error: --save {args.save}: {e}", file=sys.stderr)
            return 2
    _emit(result, args.format, scored.warnings)
    return 0


def _in_memory(args: argparse.Namespace) -> _Scored:
    """The inputs read whole and scored (:func:`cophe_core.api.score_labels`, or :func:`~cophe_core.api.decide_run`
    for a scores file)."""
    decision = None
    kw = {"doc_col": args.doc_col, "code_col": args.code_col, "header": args.header}
    gold, pred = read_labels(args.gold, **kw), read_input(args.pred, **kw)  # each file parsed once
    if isinstance(pred, RawScores):
        run, decision = decide_run(
            gold,
            pred,
            threshold=args.threshold,
            top_k=args.top_k,
            tune_on=tuple(args.tune_on) if args.tune_on else None,
            ontology=args.ontology,
            system=args.system,
            max_level=args.max_level,
            bound=_bound(args.max_rejected),
            **kw,
        )
    else:
        if args.threshold is not None or args.top_k is not None or args.tune_on:
            raise InputError(
                f"{args.pred}: --threshold, --top-k and --tune-on need a scores file "
                "(doc_id,code,score rows, or one score column per code)"
            )
        run = score_labels(
            gold,
            {"pred": pred},
            ontology=args.ontology,
            system=args.system,
            bound=_bound(args.max_rejected),
        )
    ev = run.evaluation("pred", max_level=args.max_level)
    warnings, rejected = list(run.corpus.warnings), run.corpus.rejected
    rows = {r.file: r.to_dict() for r in run.corpus.file_rows.values()}
    dev = run.dev.corpus if run.dev is not None else None
    if dev is not None:  # the development split a threshold was tuned on
        warnings += [f"development split: {w}" for w in dev.warnings]
        rejected = pd.concat([r for r in (rejected, dev.rejected) if len(r)] or [rejected], ignore_index=True)
        rows |= {r.file: r.to_dict() for r in dev.file_rows.values()}
    figures = None
    if args.metrics == "suite":
        from .scoring.suite import icm_note, suite  # here: the default table needs no suite

        figures = suite(ev)
        warnings += [n for n in [icm_note(ev)] if n]  # documents with no gold code leave ICM
    if run.corpus.needs_system:  # the rows' reasons are neutral; here is the flag that reads them
        warnings.append(f"undotted codes were left out; to read them, give {OPTIONS['system'].cli}")
    return _Scored(ev, warnings, rejected, rows, run.detection, figures, decision)


def _streamed(args: argparse.Namespace) -> _Scored:
    """The inputs scored in chunks (:func:`cophe_core.scale.pipeline.score_dataset`)."""
    from .scale.pipeline import score_dataset  # here: the in-memory path needs no pyarrow.dataset

    _keep_freed_memory()
    ev = score_dataset(
        args.gold,
        args.pred,
        ontology=args.ontology,
        system=args.system,
        max_level=args.max_level,
        doc_col=args.doc_col,
        code_col=args.code_col,
        header=args.header,
        chunk_rows=args.chunk_rows,
        keep_documents=bool(args.documents or args.bootstrap),  # else memory does not grow with them
        suite=args.metrics == "suite",  # two passes: the gold standard's frequencies first
        bound=_bound(args.max_rejected),
    )
    warnings = list(ev.warnings) + [n for n in [ev.icm_note] if n]
    rows = {r.file: r.to_dict() for r in ev.rows.values()}
    return _Scored(ev, warnings, ev.rejected, rows, ev.detection, ev.suite)


# glibc's mallopt parameters, and the values the streamed command sets
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MMAP_THRESHOLD = 32 << 20  # glibc's largest
_TRIM_THRESHOLD = 1 << 30


def _keep_freed_memory() -> bool:
    """With glibc, let this process reuse the memory it frees: blocks up to 32 MB come from the heap rather
    than each from the system (which hands them back zeroed, page by page), and the heap's free top is kept
    up to 1 GB. The streamed path allocates and frees arrays of a chunk's rows over and over; page faults took
    a quarter of its CPU time (10.5M rows: 4.1 s CPU, 1.0 s of it the system's, against 3.5 s and 0.4 s). Peak
    memory is the same. The command's own process only: the library leaves a host program's allocator as it
    is. Whether the setting was made (not on other C libraries)."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):  # no C library to ask, or one without mallopt (musl, macOS)
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
    )


def _not_streamed(args: argparse.Namespace) -> str | None:
    """What of ``args`` streamed scoring does not offer (a key of :data:`_NOT_STREAMED`), or None."""
    if args.metrics == "suite" and args.bootstrap:
        return "metrics"
    if args.threshold is not None or args.top_k is not None or args.tune_on:
        return "scores"
    return "save" if args.save else None


def _out_format(args: argparse.Namespace, formats: Sequence[str]) -> str | None:
    """The format ``--out`` names by its ending, when it is one of ``formats`` and its folder exists; else
    None, said in one line."""
    fmt = Path(args.out).suffix.lower().lstrip(".")
    if fmt not in formats:
        print(
            f"cophe: error: --out {args.out}: end the name in .{', .'.join(formats)} to say the format",
            file=sys.stderr,
        )
        return None
    if not os.path.isdir(os.path.dirname(os.path.abspath(args.out))):
        print(
            f"cophe: error: --out {args.out}: no such folder; give a path in a folder that exists",
            file=sys.stderr,
        )
        return None
    return fmt


def _evaluations(args: argparse.Namespace) -> dict[str, Evaluation]:
    """Every ``--run`` scored against ``--gold`` (in memory), at ``--max-level``; the baseline checked."""
    runs = dict(args.run)
    if len(runs) != len(args.run):
        raise InputError("--run: two runs have the same name; name each NAME=PATH")
    if args.baseline is not None and args.baseline not in runs:
        raise InputError(f"--baseline {args.baseline}: no run of that name; give one of {', '.join(runs)}")
    scoring = score_files(
        args.gold,
        runs,
        ontology=args.ontology,
        system=args.system,
        doc_col=args.doc_col,
        code_col=args.code_col,
        bound=_bound(args.max_rejected),
        header=args.header,
    )
    if scoring.refused:
        raise TooManyRejected.together(list(scoring.refused.values()))
    for w in scoring.corpus.warnings:
        print(f"cophe: warning: {w}", file=sys.stderr)
    return {r: scoring.evaluation(r, max_level=args.max_level) for r in runs}


def _figure(args: argparse.Namespace) -> int:
    """``cophe figure KIND``: one figure of the runs as SVG, PNG or PDF."""
    from .output.figures_export import FORMATS, paper_figure, render

    fmt = _out_format(args, list(FORMATS))
    if fmt is None:
        return 2
    try:
        evals = _evaluations(args)
        fig = paper_figure(
            args.kind,
            evals,
            width=args.width,
            metric=args.statistic,
            baseline=args.baseline,
            level=args.level,
            top=args.top,
        )
        data = render(fig, fmt)
        Path(args.out).write_bytes(data)
    except (InputError, ValueError) as e:
        print(f"cophe: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"cophe: error: --out {args.out}: {e.strerror or e}", file=sys.stderr)
        return 2
    print(f"wrote {args.out} ({len(data):,} bytes, {fig.layout.width / 96:g} in wide)")
    return 0


def _report(args: argparse.Namespace) -> int:
    """``cophe report``: the runs' table for a paper, in the format ``--out`` ends in."""
    from .output.coder_report import coder_report
    from .output.paper_tables import TABLE_FORMATS, write_table

    fmt = _out_format(args, TABLE_FORMATS if args.kind == "paper" else ("html", "pdf"))
    if fmt is None:
        return 2
    try:
        evals = _evaluations(args)
        if args.kind == "coder":
            data = coder_report(evals, fmt, min_support=args.min_support)
        else:
            data = write_table(
                evals,
                fmt,
                baseline=args.baseline,
                statistics=list(dict.fromkeys(args.statistic or ["f1"])),
                n_resamples=args.bootstrap,
                seed=args.seed,
            )
        Path(args.out).write_bytes(data)
    except (InputError, ValueError) as e:
        print(f"cophe: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"cophe: error: --out {args.out}: {e.strerror or e}", file=sys.stderr)
        return 2
    print(f"wrote {args.out} ({len(data):,} bytes)")
    return 0


def _intervals(ci: pd.DataFrame, args: argparse.Namespace) -> dict[str, Any]:
    """The JSON's ``intervals``: the bootstrap's settings and each figure's [low, high]."""
    return {
        "resamples": args.bootstrap,
        "confidence": 0.95,
        "seed": args.seed,
        "figures": {r.figure: [r.low, r.high] for r in ci.itertuples()},
    }


def _emit(result: dict[str, Any], format: str, warnings: list[str]) -> None:
    """The result on stdout (JSON or the table), then the warnings on stderr."""
    try:
        if format == "json":
            json.dump(result, sys.stdout, indent=1)
            sys.stdout.write("\n")
        else:
            print(_table(result))
        sys.stdout.flush()
    except BrokenPipeError:  # `cophe score … | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
    for w in warnings:
        print(f"cophe: warning: {w}", file=sys.stderr)


# what streamed scoring does not offer, each with the reason given on the command line
_NOT_STREAMED = {
    "metrics": "--metrics suite with --bootstrap is not available for streamed scoring (a folder, a glob or "
    "--stream): the suite's intervals resample every document's values, which are not kept; give one of "
    "them, or score in memory",
    "scores": "--threshold, --top-k and --tune-on are not available for streamed scoring (a folder, a glob "
    "or --stream), which takes code sets; decide the codes first, or score the scores file in memory",
    "save": "--save is not available for streamed scoring (a folder, a glob or --stream): a saved analysis "
    "holds its input files",
}


def _compare(args: argparse.Namespace) -> int:
    """``cophe compare``: the runs scored in memory, then one :class:`~cophe_core.breakdown.comparison.Comparison`
    printed as a table, JSON or CSV (the runs table)."""
    from .breakdown.comparison import Comparison

    runs = dict(args.run)
    if len(runs) != len(args.run):
        print("cophe: error: --run: two runs have the same name; name each NAME=PATH", file=sys.stderr)
        return 2
    if len(runs) < 2:
        print("cophe: error: --run: give two runs or more to compare, each NAME=PATH", file=sys.stderr)
        return 2
    if not _outputs_ok(args):
        return 2
    if is_dataset(args.gold) or any(is_dataset(p) for p in runs.values()):
        print(
            "cophe: error: cophe compare scores files in memory; for a folder or a glob, write an aggregate "
            "analysis (cophe aggregate) and compare the runs in the dashboard",
            file=sys.stderr,
        )
        return 2
    try:
        scoring = score_files(
            args.gold,
            runs,
            ontology=args.ontology,
            system=args.system,
            doc_col=args.doc_col,
            code_col=args.code_col,
            bound=_bound(args.max_rejected),
            header=args.header,
        )
        if scoring.refused:  # a comparison of the runs asked for, or none
            raise TooManyRejected.together(list(scoring.refused.values()))
        cmp = Comparison.of(
            {r: scoring.evaluation(r, max_level=args.max_level) for r in runs},
            baseline=args.baseline,
            b=args.versus,
            n_resamples=args.bootstrap,
            seed=args.seed,
        )
        ev = cmp.evals[cmp.a]
        result = {
            "version": __version__,
            "documents": len(ev.docs),
            "ontology": ev.ontology.name,
            "levels": list(ev.levels),
            **cmp.to_dict(),
        }
    except (InputError, ValueError) as e:
        print(f"cophe: error: {e}", file=sys.stderr)
        return 2
    if args.families:
        _write_csv(cmp.families(), args.families)
    try:
        if args.format == "json":
            json.dump(result, sys.stdout, indent=1)
            sys.stdout.write("\n")
        elif args.format == "csv":
            from .output.report import safe_csv

            sys.stdout.write(safe_csv(cmp.run_table))
        else:
            print(_compare_table(cmp, result))
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    for w in scoring.corpus.warnings:
        print(f"cophe: warning: {w}", file=sys.stderr)
    return 0


def _compare_table(cmp: Any, result: dict[str, Any]) -> str:
    """``cophe compare``'s table: the headline figures of every run against the baseline, the headline
    verdicts of B − A, and the first families that changed."""
    from .breakdown.comparison import p_text
    from .breakdown.stats import HEADLINES

    def num(v: float, signed: bool = False) -> str:
        return "–" if pd.isna(v) else format(v, "+.3f" if signed else ".3f")

    def p_cell(p: float) -> str:
        return "–" if pd.isna(p) else p_text(p).removeprefix("p = ").removeprefix("p ")

    t = cmp.run_table[cmp.run_table.figure.isin(HEADLINES)]
    t = t.iloc[t.figure.map(HEADLINES.index).argsort(kind="stable")]  # grouped by figure, runs in order
    w = max(8, *map(len, cmp.runs))
    lines = [
        f"{result['documents']} documents, ontology {result['ontology']}, levels {', '.join(result['levels'])}; "
        f"{cmp.n_resamples} resamples, seed {cmp.seed}, 95% intervals",
        "",
        f"every run against {cmp.baseline} (p-values corrected by Holm over the runs)",
    ]
    head = f"{'figure':<22} {'run':<{w}} {'value':>7} {'interval':>15} {'diff.':>7} {'interval':>17} {'p Holm':>9}  verdict"
    lines += [head, "-" * len(head)]
    for r in t.itertuples():
        base = r.run == cmp.baseline
        lines.append(
            f"{r.figure:<22} {r.run:<{w}} {num(r.value):>7} {num(r.low) + '–' + num(r.high):>15} "
            + (
                f"{'':>7} {'':>17} {'':>9}  baseline"
                if base
                else f"{num(r.delta, True):>7} {num(r.delta_low, True) + ' to ' + num(r.delta_high, True):>17} "
                f"{p_cell(r.p_holm):>9}  {r.verdict}"
            )
        )
    if cmp.left_out:
        lines.append(f"left out (first {len(cmp.runs)} runs shown): {', '.join(cmp.left_out)}")
    lines += ["", f"{cmp.b} − {cmp.a}:"] + [f"  {v.describe(cmp.a, cmp.b)}" for v in cmp.headline_verdicts]
    fam = cmp.families()
    lines += [
        "",
        f"families at {cmp.family_level}: {int(fam.flagged.sum())} of {len(fam)} differ beyond chance "
        "(Benjamini–Hochberg, false discovery rate 5%); the 10 largest changes in errors:",
    ]
    for r in fam.head(10).itertuples():
        lines.append(
            f"  {r.code:<8} {r.change_errors:+6d} errors  F1 {num(r.delta_f1, True)}  q {p_cell(r.q_value)}"
            f"{'  beyond chance' if r.flagged else ''}  {r.title}"
        )
    return "\n".join(lines)


def _write_csv(table: pd.DataFrame, path: str) -> None:
    """A table as CSV, cells that a spreadsheet would run as a formula defused (:func:`report.safe_csv`)."""
    from .output.report import safe_csv  # here: the table on stdout writes no file

    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(safe_csv(table))


def _save(args: argparse.Namespace, ev: Figures, decision: Decision | None) -> None:
    """Write ``--save``: the inputs as given, the reading options and the decision rule."""
    from .output.analysis import analysis_from_files, creation_time, write_analysis

    custom = args.ontology not in (
        "auto",
        *NAMES,
    )  # a hierarchy file (scoring has read it): saved as an input
    rule = None if decision is None else decision.rule
    analysis = analysis_from_files(
        args.gold,
        {Path(args.pred).stem or "pred": args.pred},
        rule=rule,
        hierarchy=args.ontology if custom else None,
        created=creation_time(),  # SOURCE_DATE_EPOCH when set: the same inputs give the same bytes
        options={
            "ontology": "custom" if custom else args.ontology,
            "system": args.system,
            "doc_col": args.doc_col or None,
            "code_col": args.code_col or None,
            "header": args.header,
            "max_level": args.max_level or None,
        },
        cophe_version=__version__,
        code_sets=dict(ev.ontology.code_sets),
    )
    Path(args.save).write_bytes(write_analysis(analysis))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
