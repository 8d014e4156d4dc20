"""Titles for nodes that the official lists do not title."""

from __future__ import annotations

_DANGLING = {
    "with",
    "without",
    "of",
    "and",
    "or",
    "in",
    "to",
    "the",
    "due",
    "by",
    "for",
    "as",
    "other",
    "not",
    "type",
}


def derived_title(child_titles: list[str], *, fallback: str | None = None, min_chars: int = 8) -> str:
    """A title for a node from its children's titles.

    A lone child lends its title; the "unspecified" child names the family ("Chronic iridocyclitis,
    unspecified" → "Chronic iridocyclitis"); otherwise the children's common
    leading words (at least ``min_chars`` long), without a dangling "with"/"of";
    otherwise ``fallback``, or
    the first child's title "and related codes".

    >>> derived_title(["Chronic iridocyclitis, unspecified", "Chronic iridocyclitis in diseases"])
    'Chronic iridocyclitis'
    >>> derived_title(["Senile dementia with delirium", "Senile dementia with delusions"])
    'Senile dementia'
    """
    if len(child_titles) == 1:
        return child_titles[0]
    for t in child_titles:
        if t.lower().endswith(", unspecified"):
            return t[: -len(", unspecified")]
    words = [[w.strip(",;:") for w in t.split()] for t in child_titles]
    common: list[str] = []
    for group in zip(*words):
        if len({w.lower() for w in group}) != 1:
            break
        common.append(group[0])
    while common and common[-1].lower() in _DANGLING:
        common.pop()
    if len(child_titles) > 1 and len(" ".join(common)) >= min_chars:
        return " ".join(common)
    if fallback is not None:
        return fallback
    return f"{child_titles[0]} and related codes" if child_titles else "(no title)"
