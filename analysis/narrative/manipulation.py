"""The template manipulation check: how much less likely the models find each template's text.

For every final model, the mean sequence log-probability (natural log, summed over tokens) of the
items of each template is compared with the standard template's. The ratio of likelihoods is
reported in log10 units, ``(mean log p(template) - mean log p(standard)) / ln 10``, so ``-17``
means the template's narratives are 10^17 times less likely.

Where the items are matched (the default stimuli: every template tells the same stories, joined
by the items' ``story_key``), the ratio is computed item by item, as the paper's "times less
likely than standard narratives" implies: the mean over stories of log p(story with the
template's objects) - log p(the same story with standard objects), with the 95% interval of
that paired mean. Otherwise (``--template-stories independent``) the means are compared
unpaired, with the two-sample standard error; the cells are balanced, so they compare like with
like. The ``paired`` column says which was done.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from tracktale.analysis.stats.proportions import Z95
from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd

LN10 = math.log(10)


def template_logprob_ratios(models: pd.DataFrame, reference: str = "standard") -> pd.DataFrame:
    """Sequence log-probability ratios between templates, per final model, in log10 units.

    Args:
        models: Model rows of the tidy table (``task == "sequence"`` rows are used).
        reference: The template every other is compared with.

    Returns:
        One row per model and template: ``n``, ``mean_logprob`` (nats), ``mean_tokens``,
        ``log10_ratio`` with ``ci_low``/``ci_high`` (0 for the reference),
        ``log10_ratio_per_token`` (the same on per-token means, which removes length),
        ``paired`` and ``n_pairs`` (item-by-item over matched stories, or unpaired).

    Raises:
        TracktaleError: When there are no sequence rows, or the reference template is absent.
    """
    import pandas as pd

    rows = models[(models["task"] == "sequence") & models["step"].isna()]
    rows = rows.dropna(subset=["logprob"])
    if rows.empty:
        raise TracktaleError("no sequence log-probabilities in the model results")
    if reference not in set(rows["template"]):
        raise TracktaleError(f"unknown template {reference!r} in the sequence results")
    rows = rows.assign(
        per_token=rows["logprob"] / rows["n_tokens"] if "n_tokens" in rows else math.nan
    )
    stats = (
        rows.groupby(["agent", "template"])
        .agg(
            n=("logprob", "size"),
            mean_logprob=("logprob", "mean"),
            var_logprob=("logprob", "var"),
            mean_tokens=("n_tokens", "mean") if "n_tokens" in rows else ("logprob", "size"),
            mean_per_token=("per_token", "mean"),
        )
        .reset_index()
    )
    out = []
    for agent, group in stats.groupby("agent"):
        base = group[group["template"] == reference]
        if base.empty:
            continue
        base = base.iloc[0]
        for row in group.itertuples(index=False):
            ratio = (row.mean_logprob - base.mean_logprob) / LN10
            se = math.sqrt(
                _var_of_mean(row.var_logprob, row.n) + _var_of_mean(base.var_logprob, base.n)
            )
            entry = {
                "agent": agent,
                "template": row.template,
                "n": row.n,
                "mean_logprob": row.mean_logprob,
                "mean_tokens": row.mean_tokens,
                "log10_ratio": ratio,
                "se": 0.0 if row.template == reference else se / LN10,
                "log10_ratio_per_token": (row.mean_per_token - base.mean_per_token) / LN10,
                "paired": False,
                "n_pairs": 0,
            }
            if row.template != reference:
                entry.update(_paired(rows, agent, row.template, reference))
            entry["ci_low"] = entry["log10_ratio"] - Z95 * entry["se"]
            entry["ci_high"] = entry["log10_ratio"] + Z95 * entry["se"]
            out.append(entry)
    table = pd.DataFrame(out).drop(columns="se")
    columns = ["agent", "template", "n", "mean_logprob", "mean_tokens", "log10_ratio"]
    columns += ["ci_low", "ci_high", "log10_ratio_per_token", "paired", "n_pairs"]
    table = table[columns]
    described = models.drop_duplicates("agent").set_index("agent")
    table.insert(1, "label", table["agent"].map(described["label"]))
    order = described.sort_values(["family", "n_parameters", "label"]).index
    rank = {agent: position for position, agent in enumerate(order)}
    table = table.sort_values(
        ["agent", "template"], key=lambda c: c.map(rank) if c.name == "agent" else c
    )
    return table.reset_index(drop=True)


def _paired(rows: pd.DataFrame, agent: str, template: str, reference: str) -> dict[str, object]:
    """The item-by-item ratio over stories both templates tell, or nothing without two pairs."""
    if "story_key" not in rows.columns:
        return {}
    mine = rows[rows["agent"] == agent]
    columns = ["story_key", "logprob", "per_token"]
    pairs = mine.loc[mine["template"] == template, columns].merge(
        mine.loc[mine["template"] == reference, columns], on="story_key", suffixes=("", "_ref")
    )
    pairs = pairs.dropna(subset=["story_key"])
    if len(pairs) < 2:
        return {}
    difference = (pairs["logprob"] - pairs["logprob_ref"]) / LN10
    return {
        "log10_ratio": float(difference.mean()),
        "se": float(difference.std(ddof=1) / math.sqrt(len(difference))),
        "log10_ratio_per_token": float((pairs["per_token"] - pairs["per_token_ref"]).mean() / LN10),
        "paired": True,
        "n_pairs": len(pairs),
    }


def _var_of_mean(variance: float, n: int) -> float:
    return 0.0 if n < 2 or math.isnan(variance) else variance / n
