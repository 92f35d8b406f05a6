"""The plot's one goal: the field a sweep is ranked by and whether its best value is its lowest
or its highest (`Goal`). Every "best", "median" and "worst" the plot names follows it: the lanes
drawn for a role (`._lanes.ranked_lanes`), the hyperparameter charts (`._params.param_points`)
and the legend's ``best = lowest val_loss``.

Numpy only. The user names it (``LivePlot(params_field=..., params_best=...)``, the chart's
select and toggle); unnamed, it is read from the fields' names (`default_field`, `best_of`):
a loss-like name, the validation one first (``val_loss`` over ``train_loss``: it is what
decides), lowest best; else an accuracy-like one, highest best; else the first field plotted
(in the order the record was written), lowest best.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Goal", "best_of", "default_field"]

#: Names whose lowest value is best: a loss, an error, a distance.
_LOWER = re.compile(
    r"loss|err|nll|mse|mae|rmse|cost|objective|regret|perplexity|ppl|residual|dist|gap", re.I
)
#: Names whose highest value is best: an accuracy, a reward, a score.
_HIGHER = re.compile(
    r"acc|f1|auc|precision|recall|reward|return|score|iou|bleu|rouge|r2|top\d|likelihood", re.I
)
#: Names of what is measured on data held out (``val_loss``, ``test/acc``, ``eval-err``).
_HELD_OUT = re.compile(
    r"(?:^|[^a-z])(?:val|valid|validation|test|eval|dev|holdout)(?:[^a-z]|$)", re.I
)


def best_of(name: str) -> str:
    """Whether the best value of field ``name`` is its lowest (``"min"``) or its highest
    (``"max"``), read from its name: ``"max"`` for an accuracy-like name that is not also
    loss-like (``top1_err`` is an error).

    >>> best_of("val_loss"), best_of("accuracy"), best_of("top1_err"), best_of("x")
    ('min', 'max', 'min', 'min')
    """
    return "max" if _HIGHER.search(name) and not _LOWER.search(name) else "min"


def default_field(names: Sequence[str]) -> str | None:
    """The field a plot ranks when none is named, of the plotted ``names`` in written order: the
    first loss-like one measured on held-out data, else the first loss-like one, else the same
    of accuracy-like ones, else the first (None: no field).

    >>> default_field(["accuracy", "train_loss", "val_loss"])
    'val_loss'
    >>> default_field(["grad_norm", "accuracy"]), default_field(["x", "y"])
    ('accuracy', 'x')
    """
    lower = [n for n in names if _LOWER.search(n)]
    higher = [n for n in names if best_of(n) == "max"]
    for group in (lower, higher):
        held_out = [n for n in group if _HELD_OUT.search(n)]
        if held_out or group:
            return (held_out or group)[0]
    return names[0] if names else None


@dataclass(frozen=True)
class Goal:
    """What the plot ranks: ``field`` (a plotted series' label, or a vector leaf's chart name;
    None: `default_field`) and ``best`` (``"min"``, ``"max"``; None: `best_of` its name).

    >>> from types import SimpleNamespace as S
    >>> specs = [S(label="accuracy", key="accuracy", xy=None), S(label="loss", key="loss", xy=None)]
    >>> Goal().resolve(specs), Goal("accuracy").resolve(specs), Goal("loss", "max").resolve(specs)
    ((1, 'min'), (0, 'max'), (1, 'max'))
    >>> Goal().text("loss", "min")
    'best = lowest loss'
    """

    field: str | None = None
    best: str | None = None

    def resolve(self, specs: Sequence[Any]) -> tuple[int, str] | None:
        """The index in ``specs`` (a run's `._plan.Spec` s) of the series ranked and whether its
        best is its lowest or highest; None when no plotted series is the one named (or none is
        plotted but paths)."""
        ranked = [(i, s) for i, s in enumerate(specs) if s.xy is None]
        if self.field is None:
            name = default_field([s.label for _, s in ranked])
            found = next((i for i, s in ranked if s.label == name), None)
        else:
            found = next((i for i, s in ranked if self.field in (s.label, s.key)), None)
        if found is None:
            return None
        return found, self.best or best_of(specs[found].label)

    def or_default(self, specs: Sequence[Any]) -> tuple[int, str] | None:
        """`resolve`, or the default goal's when the field named is not plotted (the lanes are
        still ranked; the note under the charts says the name is not plotted)."""
        return self.resolve(specs) or Goal(None, self.best).resolve(specs)

    def telling(self, specs: Sequence[Any]) -> bool:
        """Whether a best, median and worst lane mean something in a run of ``specs``: the
        goal is named (a field or a direction), or its field's name says its direction (a loss,
        an accuracy). A sweep of some ``x`` names no lane best for its lowest ``x`` unless it
        must choose lanes to draw (past `._lanes.MAX_LANES`)."""
        if self.field is not None or self.best is not None:
            return True
        ranked = self.resolve(specs)
        name = specs[ranked[0]].label if ranked is not None else ""
        return bool(_LOWER.search(name) or _HIGHER.search(name))

    @staticmethod
    def text(field: str, best: str) -> str:
        """How the legend says it: ``best = lowest val_loss``."""
        return f"best = {'highest' if best == 'max' else 'lowest'} {field}"
