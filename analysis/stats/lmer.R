# Fit linear mixed models with lme4::lmer (maximum likelihood) for tracktale's reading times,
# each with its declared random part, along the random-effects ladder (ladder.R) when asked.
# Usage: Rscript --vanilla lmer.R DATA.csv SPEC.csv STRUCTURE.csv OUT_DIR
# SPEC.csv: `model`, `fixed` (e.g. "log_rt ~ length + surprisal_0"), `ladder` (TRUE: simplify a
# singular or non-converging fit along the ladder; FALSE: fit the structure as given) and
# `near_zero` (ladder step 2's threshold, a slope's SD over the residual SD).
# STRUCTURE.csv: `model`, `group`, `term` (one row per random slope; an empty term for a grouping
# with an intercept only). Slopes are uncorrelated (`||`) from the start.
# For each model NAME it writes steps_NAME.csv (every fit made, with its reason),
# fixed_NAME.csv (term, estimate, se, t), random_NAME.csv (VarCorr) and info_NAME.csv (key,
# value: versions, the final formula, logLik, observations, singular fit, warnings, and `error`
# with R's own message when the fit failed). Only base R and lme4 are used.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 4) stop("usage: lmer.R DATA.csv SPEC.csv STRUCTURE.csv OUT_DIR")
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(here, "ladder.R"))
ladder_control <- lmerControl(optimizer = "bobyqa", optCtrl = list(maxfun = 2e5))
ladder_model <- function(formula, data, control) {
  lmer(as.formula(formula), data = data, REML = FALSE, control = control)
}
data <- read.csv(args[1], stringsAsFactors = FALSE)
spec <- read.csv(args[2], stringsAsFactors = FALSE)
structure <- read.csv(args[3], stringsAsFactors = FALSE, na.strings = character(0))
out <- args[4]
for (column in c("participant", "item")) {
  if (column %in% names(data)) data[[column]] <- factor(data[[column]])
}
path <- function(kind, name) file.path(out, paste0(kind, "_", name, ".csv"))
write_info <- function(name, keys, values) {
  write.csv(data.frame(key = keys, value = values), path("info", name), row.names = FALSE)
}

fit_as_given <- function(fixed, slopes) {
  result <- fit_once(ladder_formula(fixed, slopes, FALSE), data)
  steps <- data.frame(
    step = 1, action = "declared", reason = "fitted as chosen, without the ladder",
    formula = result$formula, singular = isTRUE(result$singular), converged = result$converged,
    logLik = result$logLik, npar = result$npar, error = result$error, stringsAsFactors = FALSE)
  list(result = result, steps = steps)
}

for (i in seq_len(nrow(spec))) {
  name <- spec$model[i]
  slopes <- read_structure(structure, name)
  ladder <- if (isTRUE(as.logical(spec$ladder[i]))) {
    run_ladder(spec$fixed[i], slopes, data, near_zero = spec$near_zero[i], correlated = FALSE,
               relative = TRUE)
  } else {
    fit_as_given(spec$fixed[i], slopes)
  }
  write.csv(ladder$steps, path("steps", name), row.names = FALSE)
  result <- ladder$result
  if (result$error != "") {
    write_info(name, c("error", "formula", "lme4_version"),
               c(result$error, result$formula, as.character(packageVersion("lme4"))))
    next
  }
  fit <- result$fit
  coefficients <- summary(fit)$coefficients
  fixed <- data.frame(term = rownames(coefficients), estimate = coefficients[, 1],
                      se = coefficients[, 2], t = coefficients[, 3])
  write.csv(fixed, path("fixed", name), row.names = FALSE)
  write.csv(as.data.frame(VarCorr(fit)), path("random", name), row.names = FALSE)
  write_info(
    name,
    c("lme4_version", "formula", "logLik", "n_obs", "singular", "messages", "error"),
    c(as.character(packageVersion("lme4")), result$formula, result$logLik, nobs(fit),
      result$singular, result$messages, "")
  )
}
