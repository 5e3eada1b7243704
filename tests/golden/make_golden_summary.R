# Golden reference values for the decision table (docs/method.md §4c): one REML fit of all
# systems, model M = score ~ system + (1|segment_id) + a run intercept per system with at least
# two runs; emmeans model means with Kenward-Roger df and 95 % CIs; pairs(..., adjust = "holm");
# compact letters from multcomp's insert-absorb (the algorithm of multcomp::cld) on the Holm p.
#
# Usage (from the repository root):
#   setarch -R Rscript tests/golden/make_golden_summary.R
#
# Writes tests/golden/data/summary_<design>.csv and tests/golden/fixtures_summary/<design>.json.

source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE))),
                 "golden_common.R"))  # beside this script (it sets golden_dir, data_dir)
suppressPackageStartupMessages({
  library(pbkrtest)
  library(emmeans)
  library(multcomp)
})
emm_options(pbkrtest.limit = 1e6, lmerTest.limit = 1e6)

fixture_dir <- file.path(golden_dir, "fixtures_summary")
# lme4's default optimizer stops up to 1e-7 above the REML optimum on these designs, which moves
# a Holm p by up to 1e-3; the `tight` block of each fixture refits with these tolerances, for the
# comparison at our own optimum (test_own_fit).
tight_control <- lmerControl(optimizer = "nloptwrap", optCtrl = list(
  xtol_abs = 1e-12, ftol_abs = 1e-14, xtol_rel = 1e-12, ftol_rel = 1e-15, maxeval = 1e5))
dir.create(fixture_dir, showWarnings = FALSE, recursive = TRUE)

# ---------------------------------------------------------------- designs
# runs per system (a single-run system in each) and the system means; segment SD 0.2, residual
# SD 0.05, each system its own run SD.
designs <- list(
  sys3 = list(runs = c(A = 1, B = 4, C = 3), mu = c(0.40, 0.46, 0.37),
              run_sd = c(0.02, 0.025, 0.02), segments = 30),
  sys5 = list(runs = c(A = 3, B = 1, C = 4, D = 2, E = 5),
              mu = c(0.40, 0.41, 0.50, 0.36, 0.45),
              run_sd = c(0.02, 0.02, 0.03, 0.015, 0.025), segments = 25),
  sys8 = list(runs = c(A = 4, B = 3, C = 1, D = 5, E = 2, F = 4, G = 1, H = 3),
              mu = c(0.40, 0.41, 0.47, 0.50, 0.34, 0.45, 0.38, 0.58),
              run_sd = c(0.02, 0.025, 0.02, 0.03, 0.02, 0.025, 0.02, 0.02), segments = 20)
)

simulate <- function(d, seed) {
  set.seed(seed)
  seg <- rnorm(d$segments, 0, 0.2)
  rows <- list()
  for (i in seq_along(d$runs)) {
    s <- names(d$runs)[i]
    for (r in seq_len(d$runs[[i]])) {
      b <- rnorm(1, 0, d$run_sd[i])
      y <- d$mu[i] + seg + b + rnorm(d$segments, 0, 0.05)
      rows[[length(rows) + 1]] <- data.frame(
        segment_id = sprintf("seg%03d", seq_len(d$segments)),
        run_id = sprintf("%s_s%02d", s, r), system = s, score = round(y, 10))
    }
  }
  do.call(rbind, rows)
}

formula_of <- function(runs) {
  multi <- names(runs)[runs >= 2]
  terms <- sprintf('(0 + dummy(system, "%s")|run_id)', multi)
  paste(c("score ~ system + (1|segment_id)", terms), collapse = " + ")
}

# ---------------------------------------------------------------- the tight refit
tight_fit <- function(form, data) {
  m <- lmer(as.formula(form), data = data, REML = TRUE, control = tight_control)
  emm <- emmeans(m, "system", lmer.df = "kenward-roger")
  means <- as.data.frame(summary(emm, infer = c(TRUE, FALSE)))
  holm <- as.data.frame(summary(pairs(emm, reverse = FALSE), adjust = "holm"))
  comps <- t(sapply(strsplit(as.character(holm$contrast), " - "), identity))
  list(control = "nloptwrap, xtol_abs 1e-12, ftol_abs 1e-14, xtol_rel 1e-12, ftol_rel 1e-15",
       reml_criterion = REMLcrit(m), theta = unname(getME(m, "theta")),
       means = data.frame(system = as.character(means$system), estimate = means$emmean,
                          df = means$df),
       pairs = data.frame(first = comps[, 1], second = comps[, 2], p_holm = holm$p.value))
}

# ---------------------------------------------------------------- one design
golden <- function(name, d, seed) {
  path <- file.path(data_dir, paste0("summary_", name, ".csv"))
  data <- simulate(d, seed)
  write.csv(data, path, row.names = FALSE, quote = FALSE)
  data <- read.csv(path, colClasses = c("character", "character", "character", "numeric"))
  data$system <- factor(data$system, levels = sort(unique(data$system)))
  form <- formula_of(d$runs)
  m <- lmer(as.formula(form), data = data, REML = TRUE)
  cat(name, "singular:", isSingular(m, tol = 1e-4), "\n")
  emm <- emmeans(m, "system", lmer.df = "kenward-roger")
  means <- as.data.frame(summary(emm, infer = c(TRUE, FALSE)))
  raw <- as.data.frame(summary(pairs(emm, reverse = FALSE), adjust = "none"))
  holm <- as.data.frame(summary(pairs(emm, reverse = FALSE), adjust = "holm"))
  levels <- levels(data$system)
  comps <- t(sapply(strsplit(as.character(holm$contrast), " - "), identity))
  signif <- holm$p.value < 0.05
  names(signif) <- as.character(holm$contrast)
  by_mean <- as.character(means$system[order(means$emmean)])
  best_first <- rev(by_mean)
  cld <- multcomp:::insert_absorb(signif, comps = comps, lvl_order = by_mean,
                                  levels.x = best_first)
  out <- list(
    case = name, data = list(path = paste0("data/summary_", name, ".csv")),
    formula = form, reml_criterion = REMLcrit(m),
    theta = unname(getME(m, "theta")),
    theta_terms = paste0(unlist(getME(m, "cnms")), "|", names(getME(m, "cnms"))),
    variance_components = setNames(as.list(as.data.frame(VarCorr(m))$vcov),
                                   as.data.frame(VarCorr(m))$grp),
    means = data.frame(system = as.character(means$system), estimate = means$emmean,
                       se = means$SE, df = means$df, lower = means$lower.CL,
                       upper = means$upper.CL),
    pairs = data.frame(first = comps[, 1], second = comps[, 2], estimate = raw$estimate,
                       se = raw$SE, df = raw$df, t = raw$t.ratio, p = raw$p.value,
                       p_holm = holm$p.value),
    letters = as.list(cld$Letters[best_first]),
    tight = tight_fit(form, data),
    versions = list(R = R.version.string, lme4 = as.character(packageVersion("lme4")),
                    pbkrtest = as.character(packageVersion("pbkrtest")),
                    emmeans = as.character(packageVersion("emmeans")),
                    multcomp = as.character(packageVersion("multcomp")))
  )
  writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, pretty = TRUE, dataframe = "rows"),
             file.path(fixture_dir, paste0(name, ".json")))
  cat(name, ": ", paste(names(cld$Letters[best_first]), cld$Letters[best_first], collapse = " "),
      "\n")
}

seeds <- c(sys3 = 2032, sys5 = 2031, sys8 = 2083)
# run as a script; make_golden_mvt.R sources this file for its designs and helpers only
if (sys.nframe() == 0L) for (name in names(designs)) golden(name, designs[[name]], seeds[[name]])
