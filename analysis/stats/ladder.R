# The random-effects ladder of tracktale: fit the maximal model the design justifies and, when it
# is singular or does not converge, simplify it along a declared path (Matuschek et al. 2017):
#   1. drop the correlations between random effects (`||`);
#   2. drop the random slopes whose SD is (near) zero (below `near_zero`, log-odds);
#   3. drop random slopes one at a time by likelihood-ratio test: the slope whose removal costs
#      least goes while its p exceeds `alpha` (0.2), or while the fit is still singular or not
#      converged; a slope is a candidate only when no other slope of its grouping contains it
#      (an interaction goes before its main effects).
# Every fit is a step of the returned table, with the reason it was made. Sourced by
# glmer_ladder.R (one data set, the report), glmer_sims.R (simulations) and lmer.R (reading
# times: it sets `ladder_model` and `ladder_control` to lmer's after sourcing). Only base R
# and lme4 are used.
suppressPackageStartupMessages(library(lme4))

ladder_control <- glmerControl(optimizer = "bobyqa", optCtrl = list(maxfun = 2e5))

# The model fitted at each step (a script sourcing this file may replace it, as lmer.R does).
ladder_model <- function(formula, data, control) {
  glmer(as.formula(formula), data = data, family = binomial, control = control)
}

random_part <- function(slopes, correlated) {
  parts <- vapply(names(slopes), function(group) {
    terms <- slopes[[group]]
    if (length(terms) == 0) return(sprintf("(1 | %s)", group))
    sprintf("(1 + %s %s %s)", paste(terms, collapse = " + "), if (correlated) "|" else "||",
            group)
  }, character(1))
  paste(parts, collapse = " + ")
}

ladder_formula <- function(fixed, slopes, correlated) {
  paste(fixed, random_part(slopes, correlated), sep = " + ")
}

fit_once <- function(formula, data, control = ladder_control) {
  seen <- character(0)
  fit <- tryCatch(
    withCallingHandlers(
      ladder_model(formula, data, control),
      warning = function(w) {
        seen <<- c(seen, conditionMessage(w))
        invokeRestart("muffleWarning")
      }
    ),
    error = function(e) e
  )
  if (inherits(fit, "error")) {
    return(list(fit = NULL, formula = formula, error = conditionMessage(fit), singular = NA,
                converged = FALSE, messages = "", logLik = NA, npar = NA))
  }
  messages <- unique(c(seen, fit@optinfo$conv$lme4$messages))
  # A singular fit is judged by isSingular; lme4's own "boundary (singular)" note is not a
  # convergence failure.
  failures <- grep("converge|Hessian|eigenvalue", messages, value = TRUE, ignore.case = TRUE)
  list(fit = fit, formula = formula, error = "", singular = isSingular(fit),
       converged = length(failures) == 0, messages = paste(messages, collapse = " | "),
       logLik = as.numeric(logLik(fit)), npar = attr(logLik(fit), "df"))
}

fixed_effects <- function(fit) {
  coefficients <- summary(fit)$coefficients
  data.frame(term = rownames(coefficients), estimate = coefficients[, 1],
             se = coefficients[, 2], z = coefficients[, 3], p = coefficients[, 4])
}

fit_ok <- function(result) {
  result$error == "" && !isTRUE(result$singular) && result$converged
}

why_not <- function(result) {
  if (result$error != "") return(paste("fit failed:", result$error))
  reasons <- c(if (isTRUE(result$singular)) "singular fit",
               if (!result$converged) "did not converge")
  paste(reasons, collapse = " and ")
}

slope_sds <- function(result, slopes) {
  vc <- as.data.frame(VarCorr(result$fit))
  vc <- vc[is.na(vc$var2) & vc$var1 != "(Intercept)", , drop = FALSE]
  # `||` splits a grouping into agent, agent.1, ...: the name before the dot is the grouping.
  vc$group <- sub("\\.[0-9]+$", "", vc$grp)
  out <- data.frame(group = character(0), term = character(0), sd = numeric(0))
  for (group in names(slopes)) {
    for (term in slopes[[group]]) {
      row <- vc[vc$group == group & vc$var1 == term, , drop = FALSE]
      out <- rbind(out, data.frame(group = group, term = term,
                                   sd = if (nrow(row)) row$sdcor[1] else NA))
    }
  }
  out
}

candidates <- function(slopes) {
  out <- list()
  for (group in names(slopes)) {
    terms <- slopes[[group]]
    for (term in terms) {
      parts <- strsplit(term, ":", fixed = TRUE)[[1]]
      contained <- vapply(setdiff(terms, term), function(other) {
        all(parts %in% strsplit(other, ":", fixed = TRUE)[[1]])
      }, logical(1))
      if (!any(contained)) out[[length(out) + 1]] <- c(group, term)
    }
  }
  out
}

without <- function(slopes, group, term) {
  slopes[[group]] <- setdiff(slopes[[group]], term)
  slopes
}

# `correlated = FALSE` starts from the uncorrelated structure (declared, as lmer.R's reading
# models do) and skips step 1; `relative = TRUE` reads `near_zero` in units of the residual SD
# (lmer's theta for an uncorrelated slope), so that it does not depend on the response's scale.
run_ladder <- function(fixed, slopes, data, alpha = 0.2, near_zero = 0.01, correlated = TRUE,
                       relative = FALSE) {
  steps <- list()
  record <- function(action, reason, result) {
    steps[[length(steps) + 1]] <<- data.frame(
      step = length(steps) + 1, action = action, reason = reason, formula = result$formula,
      singular = isTRUE(result$singular), converged = result$converged,
      logLik = result$logLik, npar = result$npar, error = result$error,
      stringsAsFactors = FALSE)
  }
  has_slopes <- function(s) sum(lengths(s)) > 0
  result <- fit_once(ladder_formula(fixed, slopes, correlated), data)
  if (correlated) {
    record("maximal", "the maximal structure the design justifies", result)
  } else {
    record("declared", "the declared structure, slopes uncorrelated", result)
  }
  if (correlated && !fit_ok(result) && has_slopes(slopes)) {
    reason <- why_not(result)
    correlated <- FALSE
    result <- fit_once(ladder_formula(fixed, slopes, FALSE), data)
    record("drop correlations", reason, result)
  }
  if (!fit_ok(result) && has_slopes(slopes) && !is.null(result$fit)) {
    sds <- slope_sds(result, slopes)
    threshold <- if (relative) near_zero * sigma(result$fit) else near_zero
    zero <- sds[!is.na(sds$sd) & sds$sd < threshold, , drop = FALSE]
    if (nrow(zero) > 0) {
      reason <- paste0(why_not(result), "; SD < ", signif(threshold, 2), ": ",
                       paste(sprintf("%s by %s (SD %.2g)", zero$term, zero$group, zero$sd),
                             collapse = ", "))
      for (i in seq_len(nrow(zero))) slopes <- without(slopes, zero$group[i], zero$term[i])
      result <- fit_once(ladder_formula(fixed, slopes, correlated), data)
      record("drop zero-variance slopes", reason, result)
    }
  }
  if (!fit_ok(result) && has_slopes(slopes)) {
    # Backward selection by LRT (Matuschek et al. 2017): it continues while the slope whose
    # removal costs least has p > alpha, or while the fit is still singular or not converged.
    repeat {
      options <- candidates(slopes)
      if (length(options) == 0) break
      tried <- lapply(options, function(o) {
        smaller <- without(slopes, o[1], o[2])
        reduced <- fit_once(ladder_formula(fixed, smaller, correlated), data)
        chisq <- max(0, 2 * (result$logLik - reduced$logLik))
        p <- if (is.na(chisq)) NA else pchisq(chisq, df = result$npar - reduced$npar,
                                              lower.tail = FALSE)
        list(option = o, slopes = smaller, result = reduced, p = p)
      })
      ps <- vapply(tried, function(t) if (is.na(t$p)) -1 else t$p, numeric(1))
      best <- tried[[which.max(ps)]]
      if (fit_ok(result) && max(ps) <= alpha) break
      reason <- if (is.na(best$p)) {
        sprintf("%s by %s: no LRT (%s)", best$option[2], best$option[1], why_not(result))
      } else {
        sprintf("%s by %s: LRT p = %.3f%s", best$option[2], best$option[1], best$p,
                if (best$p > alpha) sprintf(" > %.2f", alpha)
                else paste0(" (the largest; the fit was ", why_not(result), ")"))
      }
      slopes <- best$slopes
      result <- best$result
      record("drop slope by LRT", reason, result)
    }
  }
  list(result = result, steps = do.call(rbind, steps), slopes = slopes,
       correlated = correlated)
}

optimizer_check <- function(result, data) {
  # As lme4::allFit, with the two optimizers Debian's lme4 has without extra packages: refit the
  # final model with Nelder-Mead and nloptwrap and compare with bobyqa.
  out <- data.frame(optimizer = character(0), max_abs_diff_fixed = numeric(0),
                    logLik_diff = numeric(0), error = character(0))
  if (is.null(result$fit)) return(out)
  for (optimizer in c("Nelder_Mead", "nloptwrap")) {
    other <- fit_once(result$formula, data,
                      glmerControl(optimizer = optimizer, optCtrl = list(maxfun = 2e5)))
    if (other$error != "") {
      out <- rbind(out, data.frame(optimizer = optimizer, max_abs_diff_fixed = NA,
                                   logLik_diff = NA, error = other$error))
      next
    }
    diff <- max(abs(fixef(other$fit) - fixef(result$fit)))
    out <- rbind(out, data.frame(optimizer = optimizer, max_abs_diff_fixed = diff,
                                 logLik_diff = other$logLik - result$logLik, error = ""))
  }
  out
}

read_structure <- function(structure, model) {
  rows <- structure[structure$model == model, , drop = FALSE]
  slopes <- list()
  for (group in unique(rows$group)) {
    terms <- rows$term[rows$group == group]
    slopes[[group]] <- terms[!is.na(terms) & terms != ""]
  }
  slopes
}
