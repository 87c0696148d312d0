# The random-effects ladder (ladder.R) on many simulated data sets, for null calibration.
# Usage: Rscript --vanilla glmer_ladder_sims.R DATA.csv SPEC.csv OUT.csv STRUCTURE.csv
# DATA.csv holds the data sets stacked (column `sim`); SPEC.csv has `model` and `formula` (the
# fixed part); STRUCTURE.csv has `model`, `group`, `term` (the maximal random slopes). OUT.csv
# gets one row per (sim, model, fixed-effect term) of the ladder's final fit: estimate, se, z,
# p (Wald), logLik, npar, singular, converged, the number of ladder steps, the final formula and
# any error. After each data set "done SIM SECONDS" goes to stdout.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 4) stop("usage: glmer_ladder_sims.R DATA.csv SPEC.csv OUT.csv STRUCTURE.csv")
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(here, "ladder.R"))
data <- read.csv(args[1], stringsAsFactors = FALSE)
spec <- read.csv(args[2], stringsAsFactors = FALSE)
structure <- read.csv(args[4], stringsAsFactors = FALSE, na.strings = character(0))

results <- list()
for (sim in unique(data$sim)) {
  started <- proc.time()[["elapsed"]]
  rows <- data[data$sim == sim, , drop = FALSE]
  rows$agent <- factor(rows$agent)
  rows$item_id <- factor(rows$item_id)
  for (i in seq_len(nrow(spec))) {
    ladder <- run_ladder(spec$formula[i], read_structure(structure, spec$model[i]), rows)
    result <- ladder$result
    if (result$error != "") {
      one <- data.frame(term = NA, estimate = NA, se = NA, z = NA, p = NA, error = result$error)
    } else {
      coefficients <- summary(result$fit)$coefficients
      one <- data.frame(term = rownames(coefficients), estimate = coefficients[, 1],
                        se = coefficients[, 2], z = coefficients[, 3], p = coefficients[, 4],
                        error = "")
    }
    one$logLik <- result$logLik
    one$npar <- result$npar
    one$singular <- isTRUE(result$singular)
    one$converged <- result$converged
    one$steps <- nrow(ladder$steps)
    one$formula <- result$formula
    one$warning <- result$messages
    one$sim <- sim
    one$model <- spec$model[i]
    results[[length(results) + 1]] <- one
  }
  cat("done", sim, proc.time()[["elapsed"]] - started, "\n")
  flush(stdout())
}
write.csv(do.call(rbind, results), args[3], row.names = FALSE)
