# Fit the same glmer models to many simulated data sets, for power and null calibration.
# Usage: Rscript --vanilla glmer_sims.R DATA.csv SPEC.csv OUT.csv [STRUCTURE.csv]
# DATA.csv holds every data set stacked, told apart by the column `sim`; SPEC.csv has columns
# `model` and `formula`. Without STRUCTURE.csv each formula is fitted as given; with it
# (`model`, `group`, `term`: the maximal random slopes) each formula is the fixed part and the
# model is fitted along the random-effects ladder (ladder.R). OUT.csv gets one row per (sim,
# model, fixed-effect term) of the (final) fit: estimate, se, z, p (Wald), logLik, npar,
# singular, converged, the number of ladder steps, the fitted formula, its warnings and any
# error. After each data set a line "done SIM SECONDS" goes to stdout, so the caller can show
# progress. Only base R and lme4 are used.
args <- commandArgs(trailingOnly = TRUE)
if (!(length(args) %in% c(3, 4))) {
  stop("usage: glmer_sims.R DATA.csv SPEC.csv OUT.csv [STRUCTURE.csv]")
}
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(here, "ladder.R"))
data <- read.csv(args[1], stringsAsFactors = FALSE)
spec <- read.csv(args[2], stringsAsFactors = FALSE)
structure <- if (length(args) == 4) {
  read.csv(args[4], stringsAsFactors = FALSE, na.strings = character(0))
} else NULL

fit_model <- function(formula, model, rows) {
  if (is.null(structure)) return(list(result = fit_once(formula, rows), steps = 1))
  ladder <- run_ladder(formula, read_structure(structure, model), rows)
  list(result = ladder$result, steps = nrow(ladder$steps))
}

result_rows <- function(fitted) {
  result <- fitted$result
  one <- if (result$error != "") {
    data.frame(term = NA, estimate = NA, se = NA, z = NA, p = NA, error = result$error)
  } else {
    cbind(fixed_effects(result$fit), error = "")
  }
  one$logLik <- result$logLik
  one$npar <- result$npar
  one$singular <- if (result$error != "") NA else isTRUE(result$singular)
  one$converged <- result$converged
  one$steps <- fitted$steps
  one$formula <- result$formula
  one$warning <- result$messages
  one
}

results <- list()
for (sim in unique(data$sim)) {
  started <- proc.time()[["elapsed"]]
  rows <- data[data$sim == sim, , drop = FALSE]
  rows$agent <- factor(rows$agent)
  rows$item_id <- factor(rows$item_id)
  for (i in seq_len(nrow(spec))) {
    one <- result_rows(fit_model(spec$formula[i], spec$model[i], rows))
    one$sim <- sim
    one$model <- spec$model[i]
    results[[length(results) + 1]] <- one
  }
  cat("done", sim, proc.time()[["elapsed"]] - started, "\n")
  flush(stdout())
}
write.csv(do.call(rbind, results), args[3], row.names = FALSE)
