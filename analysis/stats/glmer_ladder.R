# Fit logistic mixed models along tracktale's random-effects ladder (ladder.R).
# Usage: Rscript --vanilla glmer_ladder.R DATA.csv SPEC.csv STRUCTURE.csv OUT_DIR
# SPEC.csv: `model`, `fixed` (the fixed part, e.g. "correct ~ complexity_z * task_s").
# STRUCTURE.csv: `model`, `group`, `term` (one row per random slope; an empty term for a
# grouping with an intercept only). For each model NAME it writes steps_NAME.csv (the ladder),
# optimizers_NAME.csv (the final fit under other optimizers) and, for the final fit, the files
# glmer.R writes: fixed_NAME.csv, vcov_NAME.csv, random_NAME.csv, info_NAME.csv (with the final
# formula as `formula`).
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 4) stop("usage: glmer_ladder.R DATA.csv SPEC.csv STRUCTURE.csv OUT_DIR")
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(here, "ladder.R"))
data <- read.csv(args[1], stringsAsFactors = FALSE)
spec <- read.csv(args[2], stringsAsFactors = FALSE)
structure <- read.csv(args[3], stringsAsFactors = FALSE, na.strings = character(0))
out <- args[4]
for (column in c("agent", "item_id")) {
  if (column %in% names(data)) data[[column]] <- factor(data[[column]])
}
path <- function(kind, name) file.path(out, paste0(kind, "_", name, ".csv"))
write_info <- function(name, keys, values) {
  write.csv(data.frame(key = keys, value = values), path("info", name), row.names = FALSE)
}

for (i in seq_len(nrow(spec))) {
  name <- spec$model[i]
  ladder <- run_ladder(spec$fixed[i], read_structure(structure, name), data)
  write.csv(ladder$steps, path("steps", name), row.names = FALSE)
  result <- ladder$result
  if (result$error != "") {
    write_info(name, c("error", "formula", "lme4_version", "r_version"),
               c(result$error, result$formula, as.character(packageVersion("lme4")),
                 R.version.string))
    next
  }
  fit <- result$fit
  write.csv(optimizer_check(result, data), path("optimizers", name), row.names = FALSE)
  write.csv(fixed_effects(fit), path("fixed", name), row.names = FALSE)
  write.csv(as.matrix(vcov(fit)), path("vcov", name))
  write.csv(as.data.frame(VarCorr(fit)), path("random", name), row.names = FALSE)
  write_info(
    name,
    c("lme4_version", "r_version", "logLik", "AIC", "BIC", "npar", "n_obs", "singular",
      "messages", "formula", "error"),
    c(as.character(packageVersion("lme4")), R.version.string, result$logLik, AIC(fit),
      BIC(fit), result$npar, nobs(fit), result$singular, result$messages, result$formula, "")
  )
}
