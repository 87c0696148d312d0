"""Our inference against R's reference implementations (sandwich, lme4, emmeans).

These run R where it is installed and fail rather than skip under TRACKTALE_REQUIRE_SERVICES=1
(scripts/test.sh installs r-base-core, r-cran-lme4, r-cran-sandwich and r-cran-emmeans).
"""

from __future__ import annotations

import functools
import subprocess

import numpy as np
import pandas as pd
import pytest

from tests.conftest import require
from tracktale.analysis.power.simulate import SimulationParams, human_design, simulate_outcomes
from tracktale.analysis.stats.contrasts import glm_marginal_tables, mixed_marginal_tables
from tracktale.analysis.stats.glm import design_frame, fit_human_glm
from tracktale.analysis.stats.lme4 import rscript_path
from tracktale.analysis.stats.mixed import mixed_frame
from tracktale.analysis.stats.mixed_analysis import fit_mixed_models

pytestmark = pytest.mark.r  # every test here runs R (the fast lane leaves them out)


@functools.cache
def _r_has(*packages: str) -> bool:
    rscript = rscript_path()
    if rscript is None:
        return False
    check = " && ".join(f'requireNamespace("{p}", quietly = TRUE)' for p in packages)
    completed = subprocess.run(
        [rscript, "--vanilla", "-e", f"quit(status = !({check}))"], capture_output=True, check=False
    )
    return completed.returncode == 0


def _require_r(*packages: str) -> None:
    names = ", ".join(f"r-cran-{p}" for p in packages)
    require(_r_has(*packages), f"R with {', '.join(packages)} is not installed (Debian: {names})")


def _r(code: str, tmp_path) -> pd.DataFrame:
    """Run R code that writes ``out.csv`` into the working folder; return that table."""
    script = tmp_path / "check.R"
    script.write_text(code)
    completed = subprocess.run(
        [rscript_path(), "--vanilla", str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return pd.read_csv(tmp_path / "out.csv")


@pytest.fixture(scope="module")
def trials(human_set):
    params = SimulationParams(item_sd=0.5, complexity=-0.3, interaction=-0.1)
    rng = np.random.default_rng(5)
    return simulate_outcomes(human_design(human_set), 30, params, rng).query("role == 'main'")


def test_two_way_clustered_ses_equal_sandwich_vcovcl(trials, tmp_path):
    _require_r("sandwich")
    fit = fit_human_glm(trials, recency="focus", clustering="two-way", floor=False)
    design, _ = design_frame(trials, recency="focus", extra=("item_id",))
    design.to_csv(tmp_path / "data.csv", index=False)
    reference = _r(
        """
        library(sandwich)
        d <- read.csv("data.csv")
        m <- glm(correct ~ complexity_c + task_s + complexity_c:task_s + recency_c,
                 data = d, family = binomial)
        two <- vcovCL(m, cluster = ~ agent + item_id, type = "HC1")
        one <- vcovCL(m, cluster = ~ agent, type = "HC1")
        write.csv(data.frame(term = names(coef(m)), b = coef(m), two = sqrt(diag(two)),
                             one = sqrt(diag(one)), cov_task = two[, "task_s"]),
                  "out.csv", row.names = FALSE)
        """,
        tmp_path,
    ).set_index("term")
    ours = fit.table.set_index("term")
    reference.index = reference.index.str.replace("(Intercept)", "Intercept", regex=False)
    assert ours["b"].to_numpy() == pytest.approx(reference.loc[ours.index, "b"], abs=1e-8)
    assert ours["se"].to_numpy() == pytest.approx(reference.loc[ours.index, "two"], abs=1e-6)
    assert fit.cov.loc[ours.index, "task_s"].to_numpy() == pytest.approx(
        reference.loc[ours.index, "cov_task"], abs=1e-6
    )
    paper = fit_human_glm(trials, recency="focus").table.set_index("term")
    assert paper["se"].to_numpy() == pytest.approx(reference.loc[ours.index, "one"], abs=1e-6)
    # The default tests each term with the larger of the two SEs.
    floored = fit_human_glm(trials, recency="focus", clustering="two-way").table.set_index("term")
    assert floored["se_two_way"].to_numpy() == pytest.approx(ours["se"].to_numpy(), abs=1e-12)
    assert floored["se"].to_numpy() == pytest.approx(
        np.maximum(reference.loc[ours.index, "two"], reference.loc[ours.index, "one"]), abs=1e-6
    )
    # The items' variation is now part of the complexity SE.
    assert ours.loc["complexity_c", "se"] > paper.loc["complexity_c", "se"]


def test_marginal_probabilities_and_task_contrasts_equal_emmeans(trials, tmp_path):
    _require_r("lme4", "emmeans", "sandwich")
    analysis = fit_mixed_models(trials, engine="lme4")
    mixed = analysis.fits["model 1"]
    probabilities, contrasts = mixed_marginal_tables(mixed, [1, 2, 3, 4])
    glm = fit_human_glm(trials, clustering="two-way", floor=False)
    glm_probabilities, glm_contrasts = glm_marginal_tables(glm, [1, 2, 3, 4])
    mixed_frame(trials, "focus").to_csv(tmp_path / "data.csv", index=False)
    reference = _r(
        f"""
        suppressPackageStartupMessages({{library(lme4); library(emmeans); library(sandwich)}})
        d <- read.csv("data.csv")
        d$agent <- factor(d$agent); d$item_id <- factor(d$item_id)
        m <- glmer(correct ~ complexity_z * task_s + (1 | agent) + (1 | item_id), data = d,
                   family = binomial,
                   control = glmerControl(optimizer = "bobyqa", optCtrl = list(maxfun = 2e5)))
        mean <- {mixed.scaling["complexity_mean"]!r}; sd <- {mixed.scaling["complexity_sd"]!r}
        z <- (1:4 - mean) / sd
        # Explicit (+0.5) first, so that "revpairwise" is implicit - explicit as ours.
        e <- emmeans(m, ~ task_s | complexity_z, at = list(task_s = c(0.5, -0.5),
                     complexity_z = z), type = "response")
        p <- as.data.frame(summary(e))
        k <- as.data.frame(summary(contrast(e, "revpairwise"), infer = TRUE))
        r <- as.data.frame(summary(contrast(regrid(e), "revpairwise"), infer = TRUE))
        g <- glm(correct ~ complexity_c * task_s, data = d, family = binomial)
        eg <- emmeans(g, ~ task_s | complexity_c, at = list(task_s = c(0.5, -0.5),
                      complexity_c = 1:4 - mean(d$complexity)),
                      vcov. = vcovCL(g, cluster = ~ agent + item_id, type = "HC1"),
                      type = "response")
        pg <- as.data.frame(summary(eg))
        kg <- as.data.frame(summary(contrast(eg, "revpairwise"), infer = TRUE))
        write.csv(data.frame(prob = p$prob, low = p$asymp.LCL, high = p$asymp.UCL,
                             ratio = rep(k$odds.ratio, each = 2),
                             ratio_p = rep(k$p.value, each = 2),
                             diff = rep(r$estimate, each = 2), diff_se = rep(r$SE, each = 2),
                             gprob = pg$prob, glow = pg$asymp.LCL,
                             gratio = rep(kg$odds.ratio, each = 2),
                             gratio_low = rep(kg$asymp.LCL, each = 2)),
                  "out.csv", row.names = FALSE)
        """,
        tmp_path,
    )
    # emmeans orders rows task within complexity; ours are complexity within task.
    ours = probabilities.sort_values(["complexity", "task"]).reset_index(drop=True)
    assert ours["probability"].to_numpy() == pytest.approx(reference["prob"], abs=1e-6)
    assert ours["prob_low"].to_numpy() == pytest.approx(reference["low"], abs=1e-6)
    assert ours["prob_high"].to_numpy() == pytest.approx(reference["high"], abs=1e-6)
    every_other = reference.iloc[::2].reset_index(drop=True)
    assert contrasts["odds_ratio"].to_numpy() == pytest.approx(every_other["ratio"], abs=1e-6)
    assert contrasts["p"].to_numpy() == pytest.approx(every_other["ratio_p"], abs=1e-6)
    assert contrasts["difference"].to_numpy() == pytest.approx(every_other["diff"], abs=1e-6)
    assert contrasts["difference_se"].to_numpy() == pytest.approx(every_other["diff_se"], abs=1e-6)
    glm_ours = glm_probabilities.sort_values(["complexity", "task"]).reset_index(drop=True)
    assert glm_ours["probability"].to_numpy() == pytest.approx(reference["gprob"], abs=1e-6)
    assert glm_ours["prob_low"].to_numpy() == pytest.approx(reference["glow"], abs=1e-6)
    assert glm_contrasts["odds_ratio"].to_numpy() == pytest.approx(every_other["gratio"], abs=1e-6)
    assert glm_contrasts["or_low"].to_numpy() == pytest.approx(every_other["gratio_low"], abs=1e-6)


def test_likelihood_ratio_tests_equal_anova(trials, tmp_path):
    _require_r("lme4")
    analysis = fit_mixed_models(trials, engine="lme4")
    assert set(analysis.fits) == {"model 1", "model 2", "model 1, slopes"}
    lrt = analysis.lrt.set_index("test")
    mixed_frame(trials, "focus").to_csv(tmp_path / "data.csv", index=False)
    reference = _r(
        """
        suppressPackageStartupMessages(library(lme4))
        d <- read.csv("data.csv")
        d$agent <- factor(d$agent); d$item_id <- factor(d$item_id)
        ctl <- glmerControl(optimizer = "bobyqa", optCtrl = list(maxfun = 2e5))
        f <- function(x) glmer(x, data = d, family = binomial, control = ctl)
        m1 <- f(correct ~ complexity_z * task_s + (1 | agent) + (1 | item_id))
        m2 <- f(correct ~ complexity_z * task_s + recency_z + (1 | agent) + (1 | item_id))
        m3 <- f(correct ~ complexity_z * task_s + (1 + complexity_z | agent) + (1 | item_id))
        a <- anova(m1, m2); b <- anova(m1, m3)
        write.csv(data.frame(chisq = c(a$Chisq[2], b$Chisq[2]), df = c(a$Df[2], b$Df[2]),
                             p = c(a[2, "Pr(>Chisq)"], b[2, "Pr(>Chisq)"]),
                             aic = c(AIC(m1), AIC(m2))),
                  "out.csv", row.names = FALSE)
        """,
        tmp_path,
    )
    assert lrt.loc["recency", "chisq"] == pytest.approx(reference["chisq"][0], abs=1e-4)
    assert lrt.loc["recency", "df"] == reference["df"][0]
    assert lrt.loc["recency", "p"] == pytest.approx(reference["p"][0], abs=1e-5)
    slopes = lrt.loc["by-participant complexity slopes"]
    assert slopes["df"] == reference["df"][1] == 2
    assert slopes["chisq"] == pytest.approx(reference["chisq"][1], abs=1e-3)
    # The boundary-corrected p is the 50:50 chi-square(1)/(2) mixture: smaller than anova's.
    assert slopes["p_boundary"] <= slopes["p"]
    comparison = analysis.comparison.set_index("model")
    assert comparison.loc["model 1", "AIC"] == pytest.approx(reference["aic"][0], abs=1e-4)
    icc = analysis.icc[analysis.icc["model"] == "model 1"].set_index("grouping")
    assert 0 < icc.loc["agent", "icc"] < 1 and 0 < icc.loc["item_id", "icc"] < 1
