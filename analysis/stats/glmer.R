# Fit logistic mixed models with lme4::glmer (Laplace approximation) for tracktale.
# Usage: Rscript --vanilla glmer.R DATA.csv SPEC.csv OUT_DIR
# SPEC.csv has columns `model` and `formula`; every model is fitted to the same rows. For each
# model NAME it writes OUT_DIR/fixed_NAME.csv (term, estimate, se, z, p), vcov_NAME.csv (the
# fixed effects' covariance), random_NAME.csv (lme4's VarCorr as a data frame) and
# info_NAME.csv (key, value: versions, logLik, AIC, BIC, number of parameters, singular fit,
# warnings, and `error` with R's own message when the fit failed). Only base R and lme4 are
# used, so Debian's r-base-core and r-cran-lme4 are all it needs.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 3) stop("usage: glmer.R DATA.csv SPEC.csv OUT_DIR")
suppressPackageStartupMessages(library(lme4))
data <- read.csv(args[1], stringsAsFactors = FALSE)
spec <- read.csv(args[2], stringsAsFactors = FALSE)
for (column in c("agent", "item_id")) {
  if (column %in% names(data)) data[[column]] <- factor(data[[column]])
}
out <- args[3]
control <- glmerControl(optimizer = "bobyqa", optCtrl = list(maxfun = 2e5))

write_info <- function(name, keys, values) {
  write.csv(data.frame(key = keys, value = values), file.path(out, paste0("info_", name, ".csv")),
            row.names = FALSE)
}

for (i in seq_len(nrow(spec))) {
  name <- spec$model[i]
  warnings_seen <- character(0)
  fit <- tryCatch(
    withCallingHandlers(
      glmer(as.formula(spec$formula[i]), data = data, family = binomial, control = control),
      warning = function(w) {
        warnings_seen <<- c(warnings_seen, conditionMessage(w))
        invokeRestart("muffleWarning")
      }
    ),
    error = function(e) e
  )
  if (inherits(fit, "error")) {
    write_info(name, c("error", "lme4_version", "r_version"),
               c(conditionMessage(fit), as.character(packageVersion("lme4")), R.version.string))
    next
  }
  coefficients <- summary(fit)$coefficients
  fixed <- data.frame(
    term = rownames(coefficients),
    estimate = coefficients[, 1],
    se = coefficients[, 2],
    z = coefficients[, 3],
    p = coefficients[, 4]
  )
  write.csv(fixed, file.path(out, paste0("fixed_", name, ".csv")), row.names = FALSE)
  write.csv(as.matrix(vcov(fit)), file.path(out, paste0("vcov_", name, ".csv")))
  write.csv(as.data.frame(VarCorr(fit)), file.path(out, paste0("random_", name, ".csv")),
            row.names = FALSE)
  convergence <- fit@optinfo$conv$lme4$messages
  write_info(
    name,
    c("lme4_version", "r_version", "logLik", "AIC", "BIC", "npar", "n_obs", "singular",
      "messages", "error"),
    c(
      as.character(packageVersion("lme4")),
      R.version.string,
      as.numeric(logLik(fit)),
      AIC(fit),
      BIC(fit),
      attr(logLik(fit), "df"),
      nobs(fit),
      isSingular(fit),
      paste(unique(c(warnings_seen, convergence)), collapse = " | "),
      ""
    )
  )
}
