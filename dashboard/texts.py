"""Words shown to users: one-sentence metric explanations and coder-friendly labels."""

HELP = {
    "flat": "Flat: compares the exact codes only; predicting 401.1 for 401.9 is simply wrong.",
    "set_based": "Set-based: also credits the right family at each level (401.x at e0), "
                 "but counts a family once per document however many of its codes there are.",
    "cophe": "CoPHE: credits the right family at each level and keeps the number of codes, "
             "so predicting three codes of a family that has one shows as over-coding.",
    "precision": "Precision: of the codes the model predicted, the share that are right.",
    "recall": "Recall: of the codes in the gold standard, the share the model found.",
    "f1": "F1: the harmonic mean of precision and recall (0 when both are 0).",
    "tp": "TP (matched): codes both predicted and in the gold standard, counted per level.",
    "fp": "FP (over-coded): predicted codes beyond what the gold standard holds.",
    "fn": "FN (missed): gold-standard codes the model did not predict.",
    "balance": "Balance: (over-coded − missed) / (matched + over-coded + missed); "
               "−1 = everything missed, +1 = everything over-coded, 0 = balanced.",
    "docs_over": "Documents in which the model predicts more codes of this family than the gold standard.",
    "docs_under": "Documents in which the model predicts fewer codes of this family than the gold standard.",
    "level": "e2/e1/e0: codes with two, one or no digits after the dot and their families; "
             "block: the section of the tabular list (e.g. 401-405); chapter: the chapter.",
    "macro_f1": "Macro F1 (mean of per-code F1), as scikit-learn and Edin et al. (2023) report it.",
    "macro_f1_of_means": "Macro F1 as the F1 of macro-precision and macro-recall (CAML, LAAT, CoPHE scripts).",
}

MEASURE = {"flat": "Flat (leaf codes)", "set_based": "Set-based", "cophe": "CoPHE"}
