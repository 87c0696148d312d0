# Fit a logistic mixed model with lme4::glmer (Laplace approximation) for tracktale.
# Usage: Rscript --vanilla glmer.R DATA.csv FORMULA OUT_DIR
# Writes OUT_DIR/fixed.csv (term, estimate, se, z, p), OUT_DIR/random.csv (lme4's VarCorr as a
# data frame) and OUT_DIR/info.csv (key, value). Only base R and lme4 are used, so Debian's
# r-base-core and r-cran-lme4 are all it needs.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 3) stop("usage: glmer.R DATA.csv FORMULA OUT_DIR")
suppressPackageStartupMessages(library(lme4))
data <- read.csv(args[1], stringsAsFactors = FALSE)
for (column in c("agent", "item_id")) {
  if (column %in% names(data)) data[[column]] <- factor(data[[column]])
}
warnings_seen <- character(0)
fit <- withCallingHandlers(
  glmer(
    as.formula(args[2]),
    data = data,
    family = binomial,
    control = glmerControl(optimizer = "bobyqa", optCtrl = list(maxfun = 2e5))
  ),
  warning = function(w) {
    warnings_seen <<- c(warnings_seen, conditionMessage(w))
    invokeRestart("muffleWarning")
  }
)
coefficients <- summary(fit)$coefficients
fixed <- data.frame(
  term = rownames(coefficients),
  estimate = coefficients[, 1],
  se = coefficients[, 2],
  z = coefficients[, 3],
  p = coefficients[, 4]
)
write.csv(fixed, file.path(args[3], "fixed.csv"), row.names = FALSE)
write.csv(as.data.frame(VarCorr(fit)), file.path(args[3], "random.csv"), row.names = FALSE)
convergence <- fit@optinfo$conv$lme4$messages
info <- data.frame(
  key = c("lme4_version", "r_version", "logLik", "AIC", "BIC", "n_obs", "singular", "messages"),
  value = c(
    as.character(packageVersion("lme4")),
    R.version.string,
    as.numeric(logLik(fit)),
    AIC(fit),
    BIC(fit),
    nobs(fit),
    isSingular(fit),
    paste(unique(c(warnings_seen, convergence)), collapse = " | ")
  )
)
write.csv(info, file.path(args[3], "info.csv"), row.names = FALSE)
