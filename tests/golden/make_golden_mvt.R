# Golden reference values for the single-step max-t (docs/method.md §4c.10): emmeans'
# adjust = "mvt" on the decision model M (docs/method.md §4c.1), for the contrasts with the
# baseline (contrast(emm, "trt.vs.ctrl", ref = 1)) and all pairs (pairs(emm)), at lme4's default
# fit and at the tight refit; beside emmeans' own values (mvtnorm at its default abseps 1e-3), the
# same adjusted p and critical values recomputed directly with mvtnorm at a tight abseps, the
# precise reference.
#
# Usage (from the repository root; see tests/golden/README.md for the time it takes):
#   setarch -R Rscript tests/golden/make_golden_mvt.R
#   MVT_ONLY='^sys3$' setarch -R Rscript tests/golden/make_golden_mvt.R    # only matching designs
#
# Reads tests/golden/data/summary_sys{3,5,8}.csv (made by make_golden_summary.R), writes
# tests/golden/data/mvt_sys6.csv and tests/golden/fixtures_mvt/<design>.json.

source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE))),
                 "make_golden_summary.R"))  # its designs, simulate(), formula_of(), tight_control
suppressPackageStartupMessages(library(mvtnorm))

fixture_dir <- file.path(golden_dir, "fixtures_mvt")
dir.create(fixture_dir, showWarnings = FALSE, recursive = TRUE)
alpha <- 0.05
emm_seed <- 1  # set before every emmeans call: its pmvt/qmvt use R's random numbers

# every system with at least two runs, unequal run SDs (seed: a non-singular fit)
sys6 <- list(runs = c(A = 4, B = 3, C = 5, D = 2, E = 3, F = 4),
             mu = c(0.40, 0.43, 0.47, 0.38, 0.50, 0.41),
             run_sd = c(0.01, 0.03, 0.02, 0.04, 0.015, 0.025), segments = 25)

# the reference's abseps by family size: mvtnorm's time grows steeply with the dimension
# (28 contrasts at 1e-5: 30-100 s per probability)
ref_abseps <- function(m) if (m <= 7) 1e-5 else if (m <= 15) 3e-5 else 1e-4
ref_maxpts <- 1e8

in_box <- function(q, m, nu, R, algorithm) {
  set.seed(emm_seed)
  pmvt(rep(-q, m), rep(q, m), df = nu, corr = R, algorithm = algorithm)
}

# q with P(max|T| <= q) = 1 - alpha, T ~ MVT(R, nu) (nu = 0: normal), by uniroot on pmvt with the
# same random numbers at every q (as qmvt), from a bracket of +-0.05 around emmeans' own q
critical_ref <- function(nu, R, algorithm, start) {
  f <- function(q) in_box(q, nrow(R), nu, R, algorithm) - (1 - alpha)
  uniroot(f, lower = start - 0.05, upper = start + 0.05, extendInt = "yes", tol = 1e-7)$root
}

family <- function(ctr, name) {
  set.seed(emm_seed)
  tests <- as.data.frame(summary(ctr, adjust = "mvt", infer = c(FALSE, TRUE)))
  set.seed(emm_seed)
  ci <- as.data.frame(confint(ctr, adjust = "mvt", level = 1 - alpha))
  V <- unname(vcov(ctr))
  R <- cov2cor(V)
  m <- nrow(tests)
  nu <- emmeans:::.fix.df(tests$df)
  algorithm <- GenzBretz(maxpts = ref_maxpts, abseps = ref_abseps(m), releps = 0)
  started <- proc.time()[["elapsed"]]
  emm_crit <- (ci$upper.CL - ci$estimate) / ci$SE
  crit <- setNames(vapply(unique(nu), function(v) {
    critical_ref(v, R, algorithm, emm_crit[match(v, nu)])
  }, numeric(1)), unique(nu))
  labels <- as.character(tests$contrast)
  sides <- strsplit(labels, " - ")
  rows <- lapply(seq_len(m), function(j) {
    a <- abs(tests$t.ratio[j])
    inside <- in_box(a, m, nu[j], R, algorithm)
    q <- crit[[as.character(nu[j])]]
    list(label = labels[j], first = sides[[j]][1], second = sides[[j]][2],
         estimate = tests$estimate[j], se = tests$SE[j], df = tests$df[j], df_mvt = nu[j],
         t = tests$t.ratio[j], p_emmeans = tests$p.value[j],
         lower_emmeans = ci$lower.CL[j], upper_emmeans = ci$upper.CL[j],
         p_ref = 1 - as.numeric(inside), p_ref_error = attr(inside, "error"),
         critical_ref = q, lower_ref = tests$estimate[j] - q * tests$SE[j],
         upper_ref = tests$estimate[j] + q * tests$SE[j])
  })
  cat(sprintf("  %s: %d contrasts, reference %.0f s\n", name, m,
              proc.time()[["elapsed"]] - started))
  list(family = name, contrasts = rows, corr = R, cov = V,
       reference = list(abseps = ref_abseps(m), maxpts = ref_maxpts, seed = emm_seed))
}

fit_block <- function(label, form, data, control) {
  m <- lmer(as.formula(form), data = data, REML = TRUE, control = control)
  emm <- emmeans(m, "system", lmer.df = "kenward-roger")
  list(fit = label, reml_criterion = REMLcrit(m), theta = arr(unname(getME(m, "theta"))),
       theta_terms = paste0(unlist(getME(m, "cnms")), "|", names(getME(m, "cnms"))),
       singular = isSingular(m, tol = 1e-4),
       families = list(family(contrast(emm, "trt.vs.ctrl", ref = 1), "trt.vs.ctrl"),
                       family(pairs(emm, reverse = FALSE), "pairs")))
}

golden_mvt <- function(name, path, runs) {
  data <- read.csv(path, colClasses = c("character", "character", "character", "numeric"))
  data$system <- factor(data$system, levels = sort(unique(data$system), method = "radix"))
  form <- formula_of(runs)
  cat(name, "\n")
  out <- list(
    case = name, data = list(path = sub(paste0("^", golden_dir, "/"), "", path)),
    formula = form, baseline = levels(data$system)[1], alpha = alpha,
    fits = list(fit_block("default", form, data, lmerControl()),
                fit_block("tight", form, data, tight_control)),
    versions = list(R = R.version.string, lme4 = as.character(packageVersion("lme4")),
                    pbkrtest = as.character(packageVersion("pbkrtest")),
                    emmeans = as.character(packageVersion("emmeans")),
                    mvtnorm = as.character(packageVersion("mvtnorm")))
  )
  write_json_file(out, file.path(fixture_dir, paste0(name, ".json")))
}

only <- Sys.getenv("MVT_ONLY", ".")
sys6_path <- file.path(data_dir, "mvt_sys6.csv")
if (grepl(only, "sys6")) {
  write.csv(simulate(sys6, 2603), sys6_path, row.names = FALSE, quote = FALSE)
}
cases <- list(sys3 = designs$sys3$runs, sys5 = designs$sys5$runs, sys6 = sys6$runs,
              sys8 = designs$sys8$runs)
for (name in names(cases)) {
  if (!grepl(only, name)) next
  path <- if (name == "sys6") sys6_path else file.path(data_dir, paste0("summary_", name, ".csv"))
  golden_mvt(name, path, cases[[name]])
}
