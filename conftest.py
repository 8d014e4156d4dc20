"""Collection for the whole tree: modules of optional extras that are not installed are not collected (their
doctests import them), and their tests skip themselves."""

import importlib.util

collect_ignore = (
    [] if importlib.util.find_spec("torchmetrics") else ["cophe_core/integrations/torchmetrics.py"]
)
