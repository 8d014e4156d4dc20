"""Where cophe meets the tools of a training loop: :mod:`.mlflow` (an experiment tracker) and
:mod:`.torchmetrics` (a metric summed across processes). Each imports its tool only when used, from an
optional extra (``cophe[mlflow]``, ``cophe[torch]``)."""
