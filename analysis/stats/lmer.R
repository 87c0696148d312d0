# Fit linear mixed models with lme4::lmer (maximum likelihood) for tracktale's reading times.
# Usage: Rscript --vanilla lmer.R DATA.csv SPEC.csv OUT_DIR
# SPEC.csv has columns `model` and `formula`; every model is fitted to the same rows. For each
# model NAME it writes OUT_DIR/fixed_NAME.csv (term, estimate, se, t) and info_NAME.csv (key,
# value: versions, logLik, number of observations, singular fit, warnings, and `error` with R's
# own message when the fit failed). Only base R and lme4 are used.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 3) stop("usage: lmer.R DATA.csv SPEC.csv OUT_DIR")
suppressPackageStartupMessages(library(lme4))
data <- read.csv(args[1], stringsAsFactors = FALSE)
spec <- read.csv(args[2], stringsAsFactors = FALSE)
for (column in c("participant", "item")) {
  if (column %in% names(data)) data[[column]] <- factor(data[[column]])
}
out <- args[3]
control <- lmerControl(optimizer = "bobyqa", optCtrl = list(maxfun = 2e5))

write_info <- function(name, keys, values) {
  write.csv(data.frame(key = keys, value = values), file.path(out, paste0("info_", name, ".csv")),
            row.names = FALSE)
}

for (i in seq_len(nrow(spec))) {
  name <- spec$model[i]
  warnings_seen <- character(0)
  fit <- tryCatch(
    withCallingHandlers(
      lmer(as.formula(spec$formula[i]), data = data, REML = FALSE, control = control),
      warning = function(w) {
        warnings_seen <<- c(warnings_seen, conditionMessage(w))
        invokeRestart("muffleWarning")
      }
    ),
    error = function(e) e
  )
  if (inherits(fit, "error")) {
    write_info(name, c("error", "lme4_version"),
               c(conditionMessage(fit), as.character(packageVersion("lme4"))))
    next
  }
  coefficients <- summary(fit)$coefficients
  fixed <- data.frame(
    term = rownames(coefficients),
    estimate = coefficients[, 1],
    se = coefficients[, 2],
    t = coefficients[, 3]
  )
  write.csv(fixed, file.path(out, paste0("fixed_", name, ".csv")), row.names = FALSE)
  convergence <- fit@optinfo$conv$lme4$messages
  write_info(
    name,
    c("lme4_version", "logLik", "n_obs", "singular", "messages", "error"),
    c(
      as.character(packageVersion("lme4")),
      as.numeric(logLik(fit)),
      nobs(fit),
      isSingular(fit),
      paste(unique(c(warnings_seen, convergence)), collapse = " | "),
      ""
    )
  )
}
