# Golden reference values for the moderated run variances (docs/method.md §4b.12,
# infrepro/stats/calibrated.py `squeeze_var`): limma::squeezeVar (no covariate, robust = FALSE) on
# sets of 1 to 30 variances with df 1 to 5, and eBayes' df cap, df_total = pmin(df + d0, sum(df)).
#
# Usage (from the repository root):
#   setarch -R Rscript tests/golden/make_golden_limma.R
#
# Writes tests/golden/fixtures_limma/<case>.json. An infinite prior df (limma's Inf) is written as
# the string "Inf" (the JSON writer writes non-finite numbers as null).

source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE))),
                 "golden_common.R"))  # beside this script (it sets golden_dir)
suppressPackageStartupMessages(library(limma))

fixture_dir <- file.path(golden_dir, "fixtures_limma")
dir.create(fixture_dir, showWarnings = FALSE, recursive = TRUE)

# variances s2 = sigma2 * chi2_df / df, sigma2 from a scaled inverse chi-square with d0 df and
# scale s0^2 (d0 = Inf: sigma2 = s0^2 for every set member)
draw <- function(n, df, d0, s0sq) {
  sigma2 <- if (is.finite(d0)) s0sq * d0 / rchisq(n, d0) else rep(s0sq, n)
  sigma2 * rchisq(n, df) / df
}

# each case: the first seed from 1 whose set gives a prior df of the kind the case is about
pick <- function(note, gen, want) {
  for (seed in 1:1000) {
    set.seed(seed)
    cs <- gen()
    d0 <- suppressWarnings(squeezeVar(cs$var, cs$df))$df.prior
    if (want(d0)) return(c(cs, note = sprintf("%s (seed %d)", note, seed)))
  }
  stop("no seed found: ", note)
}
finite <- function(d0) is.finite(d0) && d0 > 0.5
cases <- list(
  prior_d4_df1 = pick("12 systems with 2 runs each, prior d0 = 4, a finite d0",
    function() list(var = draw(12, 1, 4, 1e-4), df = 1), finite),
  mixed_df = pick("20 variances, df 1 to 5, prior d0 = 8, a finite d0",
    function() list(var = draw(20, rep(1:5, 4), 8, 4e-4), df = rep(1:5, 4)), finite),
  three_df1 = pick("3 variances, df 1, prior d0 = 3, a finite d0",
    function() list(var = draw(3, 1, 3, 1e-4), df = 1), finite),
  thirty_df2 = pick("30 variances, df 2, prior d0 = 20, a finite d0",
    function() list(var = draw(30, 2, 20, 2.5e-5), df = 2), finite),
  two_three_runs = pick("12 systems with 2 or 3 runs, prior d0 = 10 (the benchmark's design)",
    function() list(var = draw(12, rep(c(1, 2), 6), 10, 1e-4), df = rep(c(1, 2), 6)), finite),
  d0_infinite = pick("10 variances of one sigma2, df 3: d0 = Inf",
    function() list(var = draw(10, 3, Inf, 1e-4), df = 3), function(d0) !is.finite(d0)),
  d0_near_zero = pick("15 variances spread over 20 orders of magnitude, df 2: d0 near 0",
    function() list(var = 10^runif(15, -10, 10), df = 2), function(d0) d0 < 0.2),
  zero_variance = pick("a zero variance among 8, df 2 (limma offsets it and warns)",
    function() list(var = c(0, draw(7, 2, 6, 1e-4)), df = 2), function(d0) TRUE),
  single = list(var = 3e-4, df = 2, note = "one variance: returned as it is, d0 = 0")
)

num_or_inf <- function(x) if (is.finite(x)) x else "Inf"

for (name in names(cases)) {
  cs <- cases[[name]]
  msgs <- character(0)
  fit <- withCallingHandlers(squeezeVar(cs$var, cs$df), warning = function(w) {
    msgs <<- c(msgs, conditionMessage(w))
    invokeRestart("muffleWarning")
  })
  df <- rep_len(cs$df, length(cs$var))
  df_total <- pmin(df + fit$df.prior, sum(df))
  out <- list(
    case = name, note = cs$note, var = arr(cs$var), df = arr(df),
    df_prior = num_or_inf(fit$df.prior), var_prior = fit$var.prior,
    var_post = arr(fit$var.post), df_total = arr(df_total),
    limma_warnings = arr(msgs),
    versions = list(r = paste(R.version$major, R.version$minor, sep = "."),
                    limma = as.character(packageVersion("limma")))
  )
  write_json_file(out, file.path(fixture_dir, paste0(name, ".json")))
  cat(sprintf("%-16s n=%2d d0=%-12s s0^2=%g\n", name, length(cs$var), format(fit$df.prior),
              fit$var.prior))
}
