# A Bayesian fit of the recency model (model 2) with brms, for tracktale's optional report part.
# Usage: Rscript --vanilla brms_recency.R DATA.csv FORMULA OUT.csv BOUND SEED CHAINS ITER
# DATA.csv holds the design frame (correct, complexity_c, task_s, recency_c, agent, item_id).
# The priors are stated here and copied into OUT.csv, so the report can print what was assumed:
# Intercept student_t(3, 0, 2.5) (brms's own default), every coefficient normal(0, 1) on the
# log-odds scale (a change of 1 in log-odds per unit is already large here), every random-effect
# SD exponential(1), correlations lkj(2). Recency is turned into percentage points per focus
# position draw by draw: 100 * b * mean(p (1 - p)) over the analysed trials, p the fitted
# probability with the random effects (an average marginal effect over these participants and
# items). OUT.csv gets one row: its posterior median and 95% interval, the posterior mass inside
# +-BOUND points, P(effect > 0), convergence figures, and the versions.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 7) stop("usage: brms_recency.R DATA.csv FORMULA OUT.csv BOUND SEED CHAINS ITER")
suppressPackageStartupMessages(library(brms))
# Debian's r-cran-bh ships no headers of its own (they are the system's, libboost-dev), and rstan
# looks for them inside BH: point it at the system's.
if (!nzchar(rstan::rstan_options("boost_lib")) ||
    !file.exists(rstan::rstan_options("boost_lib"))) {
  if (file.exists("/usr/include/boost/version.hpp")) rstan::rstan_options(boost_lib = "/usr/include")
}
data <- read.csv(args[1], stringsAsFactors = FALSE)
for (column in c("agent", "item_id")) data[[column]] <- factor(data[[column]])
bound <- as.numeric(args[4])
priors <- c(
  prior(student_t(3, 0, 2.5), class = "Intercept"),
  prior(normal(0, 1), class = "b"),
  prior(exponential(1), class = "sd")
)
if ("cor" %in% get_prior(as.formula(args[2]), data = data, family = bernoulli())$class) {
  priors <- c(priors, prior(lkj(2), class = "cor"))
}
fit <- brm(
  as.formula(args[2]), data = data, family = bernoulli(), prior = priors,
  chains = as.integer(args[6]), iter = as.integer(args[7]), seed = as.integer(args[5]),
  cores = 1, refresh = 0, silent = 2, backend = "rstan"
)
b <- as.matrix(fit, variable = "b_recency_c")[, 1]
p <- posterior_epred(fit)
points <- 100 * b * rowMeans(p * (1 - p))
nuts <- nuts_params(fit)
fixed <- summary(fit)$fixed
out <- data.frame(
  estimate_points = as.numeric(median(points)),
  ci95_low = unname(quantile(points, 0.025)),
  ci95_high = unname(quantile(points, 0.975)),
  bound = bound,
  mass_inside = mean(abs(points) < bound),
  p_positive = mean(points > 0),
  b_median = median(b),
  rhat_max = max(as.numeric(rhat(fit)), na.rm = TRUE),
  ess_bulk_min = min(as.numeric(fixed$Bulk_ESS), na.rm = TRUE),
  divergent = as.integer(sum(nuts$Value[nuts$Parameter == "divergent__"])),
  draws = length(b),
  formula = args[2],
  priors = paste(sprintf("%s ~ %s", ifelse(priors$class == "b", "b", priors$class),
                         priors$prior), collapse = "; "),
  brms_version = as.character(packageVersion("brms")),
  r_version = R.version.string
)
write.csv(out, args[3], row.names = FALSE)
