# Fit the same glmer models to many simulated data sets, for power and null calibration.
# Usage: Rscript --vanilla glmer_sims.R DATA.csv SPEC.csv OUT.csv
# DATA.csv holds every data set stacked, told apart by the column `sim`; SPEC.csv has columns
# `model` and `formula`. OUT.csv gets one row per (sim, model, fixed-effect term): estimate, se,
# z, p (Wald), the model's logLik and number of parameters, whether the fit is singular, and
# its warnings or error. After each data set a line "done SIM SECONDS" goes to stdout, so the
# caller can show progress. Only base R and lme4 are used.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 3) stop("usage: glmer_sims.R DATA.csv SPEC.csv OUT.csv")
suppressPackageStartupMessages(library(lme4))
data <- read.csv(args[1], stringsAsFactors = FALSE)
spec <- read.csv(args[2], stringsAsFactors = FALSE)
control <- glmerControl(optimizer = "bobyqa", optCtrl = list(maxfun = 2e5))

fit_one <- function(formula, rows) {
  seen <- character(0)
  fit <- tryCatch(
    withCallingHandlers(
      glmer(as.formula(formula), data = rows, family = binomial, control = control),
      warning = function(w) {
        seen <<- c(seen, conditionMessage(w))
        invokeRestart("muffleWarning")
      }
    ),
    error = function(e) e
  )
  if (inherits(fit, "error")) {
    return(data.frame(term = NA, estimate = NA, se = NA, z = NA, p = NA, logLik = NA,
                      npar = NA, singular = NA, warning = "",
                      error = conditionMessage(fit)))
  }
  coefficients <- summary(fit)$coefficients
  messages <- unique(c(seen, fit@optinfo$conv$lme4$messages))
  data.frame(
    term = rownames(coefficients),
    estimate = coefficients[, 1],
    se = coefficients[, 2],
    z = coefficients[, 3],
    p = coefficients[, 4],
    logLik = as.numeric(logLik(fit)),
    npar = attr(logLik(fit), "df"),
    singular = isSingular(fit),
    warning = paste(messages, collapse = " | "),
    error = ""
  )
}

results <- list()
for (sim in unique(data$sim)) {
  started <- proc.time()[["elapsed"]]
  rows <- data[data$sim == sim, , drop = FALSE]
  rows$agent <- factor(rows$agent)
  rows$item_id <- factor(rows$item_id)
  for (i in seq_len(nrow(spec))) {
    one <- fit_one(spec$formula[i], rows)
    one$sim <- sim
    one$model <- spec$model[i]
    results[[length(results) + 1]] <- one
  }
  cat("done", sim, proc.time()[["elapsed"]] - started, "\n")
  flush(stdout())
}
write.csv(do.call(rbind, results), args[3], row.names = FALSE)
