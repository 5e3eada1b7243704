# Golden reference values for the run-aware models: REML fits by lmerTest::lmer (lme4 default
# control) with Satterthwaite (lmerTest) and Kenward-Roger (pbkrtest) tests of fixed-effect
# contrasts. Companion of make_golden.R (same loader contract and number formatting).
#
# Usage (from the repository root):
#   setarch -R Rscript tests/golden/make_golden_ddf.R   (ASLR off: bit-reproducible fits, see README)
#   GOLDEN_ONLY='^hetero' setarch -R Rscript tests/golden/make_golden_ddf.R   # refit only matching cases
#
# Writes tests/golden/fixtures_ddf/<case>.json and the synthetic datasets
# tests/golden/data/ddf_<design>.csv. The example_ter data (tests/golden/data/example_ter.csv.gz)
# are exported from the bundled example's workflow output, not generated here (see README.md).

source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE))),
                 "golden_common.R"))  # beside this script (it sets golden_dir, data_dir)
suppressPackageStartupMessages({
  library(lmerTest)
  library(pbkrtest)
})

fixture_dir <- file.path(golden_dir, "fixtures_ddf")
dir.create(fixture_dir, showWarnings = FALSE, recursive = TRUE)
only <- Sys.getenv("GOLDEN_ONLY", "")
t_script <- proc.time()

# ---------------------------------------------------------------- random-term description
# Every random term in these models has exactly one column (one theta each). A term is described
# by its grouping factor and the value that multiplies the group indicator in its Z column:
#   "(Intercept)"             -> 1                            type "intercept"
#   "d"                       -> d                            type "covariate"
#   'dummy(system, "A")'      -> 1[system == "A"]             type "dummy"
#   'dummy(system, "A"):d'    -> 1[system == "A"] * d         type "dummy_covariate"
# key = "<column>|<group>", e.g. 'dummy(system, "A")|run_id'.
describe_column <- function(col) {
  m_dc <- regmatches(col, regexec('^dummy\\((\\w+), "([^"]*)"\\):(\\w+)$', col))[[1]]
  m_d <- regmatches(col, regexec('^dummy\\((\\w+), "([^"]*)"\\)$', col))[[1]]
  if (col == "(Intercept)") return(list(type = "intercept", factor = NULL, level = NULL,
                                        covariate = NULL))
  if (length(m_dc) == 4) return(list(type = "dummy_covariate", factor = m_dc[2],
                                     level = m_dc[3], covariate = m_dc[4]))
  if (length(m_d) == 3) return(list(type = "dummy", factor = m_d[2], level = m_d[3],
                                    covariate = NULL))
  if (grepl("^\\w+$", col)) return(list(type = "covariate", factor = NULL, level = NULL,
                                        covariate = col))
  stop("cannot describe random-effect column ", col)
}

# Terms in the order of the expanded formula (|| split into single-column terms), as lme4's
# findbars() returns them; lme4 then may reorder them by decreasing number of levels.
formula_terms <- function(form) {
  bars <- findbars(form)
  lapply(bars, function(b) {
    grp <- deparse(b[[3]])
    lhs_f <- as.formula(call("~", b[[2]]))
    tt <- terms(lhs_f)
    labs <- attr(tt, "term.labels")
    icpt <- attr(tt, "intercept") == 1
    cols <- c(if (icpt) "(Intercept)", labs)
    if (length(cols) != 1) stop("only single-column random terms are supported here")
    c(list(key = paste0(cols, "|", grp), group = grp, column = cols,
           term = paste(deparse(b, width.cutoff = 500L), collapse = "")),
      describe_column(cols))
  })
}

# ---------------------------------------------------------------- fitting one case
versions <- list(
  r = R.version.string,
  lme4 = as.character(packageVersion("lme4")),
  lmerTest = as.character(packageVersion("lmerTest")),
  pbkrtest = as.character(packageVersion("pbkrtest")),
  Matrix = as.character(packageVersion("Matrix")),
  numDeriv = as.character(packageVersion("numDeriv"))
)

# One test specification: list(name, L (matrix, columns = fixed-effect names), joint).
# joint = FALSE requires a 1-row L (t test); joint = TRUE gives the F test of all rows.
tt <- function(name, L) list(name = name, L = L, joint = FALSE)
ft <- function(name, L) list(name = name, L = L, joint = TRUE)
Lrow <- function(fe_names, ...) {
  v <- c(...)
  L <- matrix(0, 1, length(fe_names), dimnames = list(NULL, fe_names))
  L[1, names(v)] <- v
  L
}
Lrows <- function(...) do.call(rbind, list(...))

# One record per test and method: its name, type, method, L and rhs, completed by
# record(spec, L, method, rec) with the reference values.
each_test <- function(m, tests, methods, record) {
  out <- list()
  fe <- names(fixef(m))
  for (spec in tests) {
    L <- spec$L
    stopifnot(identical(colnames(L), fe))
    for (method in methods) {
      rec <- list(name = spec$name, type = if (spec$joint) "F" else "t", method = method,
                  L = L, rhs = arr(rep(0, nrow(L))))
      out[[length(out) + 1]] <- record(spec, L, method, rec)
    }
  }
  out
}

run_tests <- function(m, tests, methods, msgs_env) {
  each_test(m, tests, methods, function(spec, L, method, rec) {
    if (!spec$joint) {
      stopifnot(nrow(L) == 1)
      r <- capture(contest(m, L, ddf = method, joint = FALSE), msgs_env)
      rec$estimate <- r[["Estimate"]]
      rec$se <- r[["Std. Error"]]
      rec$df <- r[["df"]]
      rec$t <- r[["t value"]]
      rec$p <- r[["Pr(>|t|)"]]
      if (method == "Kenward-Roger") {
        rec$se_unadjusted <- sqrt(drop(L %*% as.matrix(vcov(m)) %*% t(L)))
        rec$df_get_Lb_ddf <- capture(pbkrtest::get_Lb_ddf(m, L), msgs_env)
        kr <- capture(KRmodcomp(m, L), msgs_env)$test
        rec$krmodcomp <- list(F = kr["Ftest", "stat"], F_unscaled = kr["FtestU", "stat"],
                              F_scaling = kr["Ftest", "F.scaling"], numdf = kr["Ftest", "ndf"],
                              df = kr["Ftest", "ddf"], p = kr["Ftest", "p.value"])
      }
    } else {
      r <- capture(contest(m, L, ddf = method, joint = TRUE), msgs_env)
      rec$F <- r[["F value"]]
      rec$numdf <- as.integer(r[["NumDF"]])
      rec$df <- r[["DenDF"]]
      rec$p <- r[["Pr(>F)"]]
      rec$sum_sq <- r[["Sum Sq"]]
      rec$mean_sq <- r[["Mean Sq"]]
      if (method == "Kenward-Roger") {
        kr <- capture(KRmodcomp(m, L), msgs_env)$test
        rec$F_unscaled <- kr["FtestU", "stat"]
        rec$F_scaling <- kr["Ftest", "F.scaling"]
        rec$p_unscaled <- kr["FtestU", "p.value"]
      }
    }
    rec
  })
}

run_case <- function(case, design, model, data_spec, factors, response, formula_str, methods,
                     tests_fun, control = NULL, control_str = NULL, note = NULL,
                     runner = run_tests) {
  if (nzchar(only) && !grepl(only, case)) return(invisible(NULL))
  d <- load_case_data(data_spec, factors)
  env <- new_messages()
  form <- as.formula(formula_str)
  t0 <- proc.time()
  m <- if (is.null(control)) {
    capture(lmerTest::lmer(form, data = d, REML = TRUE), env)
  } else {
    capture(lmerTest::lmer(form, data = d, REML = TRUE, control = control), env)
  }
  fit_s <- (proc.time() - t0)[["elapsed"]]
  if (!inherits(m, "lmerModLmerTest")) stop(case, ": lmerTest could not build its Satterthwaite parts")
  env$msgs <- fit_messages(m, env$msgs)

  terms_f <- formula_terms(form)
  keys <- vapply(terms_f, `[[`, "", "key")
  cnms <- getME(m, "cnms")
  stopifnot(all(lengths(cnms) == 1))
  theta <- getME(m, "theta")
  stopifnot(length(theta) == length(cnms))
  theta_terms <- paste0(unlist(cnms), "|", names(cnms))
  stopifnot(setequal(theta_terms, keys), !anyDuplicated(theta_terms))
  sig <- sigma(m)
  vc <- as.data.frame(VarCorr(m))
  variance_components <- list()
  for (k in keys) variance_components[[k]] <- sig^2 * theta[[match(k, theta_terms)]]^2
  variance_components[["Residual"]] <- sig^2
  ng <- lengths(lapply(getME(m, "flist"), levels))
  ngroups <- list()
  for (tf in terms_f) ngroups[[tf$key]] <- as.integer(ng[[tf$group]])

  fe <- fixef(m)
  V <- as.matrix(vcov(m))[names(fe), names(fe), drop = FALSE]
  p <- length(fe)

  tests <- tests_fun(names(fe))
  t1 <- proc.time()
  test_out <- runner(m, tests, methods, env)
  vkr <- NULL
  if ("Kenward-Roger" %in% methods) {
    vkr <- if (is.null(env$vkr)) as.matrix(capture(pbkrtest::vcovAdj(m), env)) else env$vkr
    dimnames(vkr) <- NULL
  }
  test_s <- (proc.time() - t1)[["elapsed"]]
  env$msgs <- unique(env$msgs)

  jac <- lapply(m@Jac_list, function(J) unname(as.matrix(J)))
  out <- list(
    case = case,
    design = design,
    model = model,
    note = note,
    data = list(source = "local", path = data_spec$path,
                filter = if (is.null(data_spec$filter)) NULL else
                  lapply(data_spec$filter, function(v) arr(as.character(v))),
                recipe = NULL),
    factors = arr(factors),
    response = response,
    formula = formula_str,
    formula_expanded = paste(deparse(lme4::expandDoubleVerts(form), width.cutoff = 500L),
                             collapse = ""),
    random_terms = arr(terms_f),
    reml = TRUE,
    control = if (is.null(control)) "lmerControl()" else control_str,
    reml_criterion = REMLcrit(m),
    loglik = as.numeric(logLik(m)),
    fixed_effect_names = arr(names(fe)),
    fixed_effects = as.list(fe),
    fixed_se = as.list(setNames(sqrt(diag(V)), names(fe))),
    vcov_beta = unname(V),
    theta = arr(unname(theta)),
    theta_names = arr(names(theta)),
    theta_terms = arr(theta_terms),
    variance_components = variance_components,
    varcorr = arr(lapply(seq_len(nrow(vc)), function(i) {
      list(grp = vc$grp[i], var1 = if (is.na(vc$var1[i])) NULL else vc$var1[i],
           vcov = vc$vcov[i])
    })),
    sigma = sig,
    nobs = as.integer(nobs(m)),
    ngroups = ngroups,
    singular = isSingular(m, tol = 1e-4),
    lme4_messages = arr(env$msgs),
    satterthwaite_internals = list(
      varpar_names = arr(c(paste0("theta:", theta_terms), "sigma")),
      varpar = arr(c(unname(theta), sig)),
      vcov_varpar = unname(as.matrix(m@vcov_varpar)),
      jac_list = arr(jac)
    ),
    vcov_beta_kr = vkr,
    tests = arr(test_out),
    fit_seconds = round(fit_s, 3),
    test_seconds = round(test_s, 3),
    versions = versions
  )
  write_json_file(out, file.path(fixture_dir, paste0(case, ".json")))
  cat(sprintf("%-30s REMLcrit %.6f  fit %5.2fs tests %5.2fs singular=%s%s\n", case,
              out$reml_criterion, fit_s, test_s, out$singular,
              if (length(env$msgs)) paste0("  [", paste(env$msgs, collapse = " | "), "]") else ""))
  for (r in test_out) {
    if (r$type == "t") {
      cat(sprintf("    %-28s %-13s est %10.6g se %9.4g df %8.3f t %8.4f p %.4g\n", r$name,
                  r$method, r$estimate, r$se, r$df, r$t, r$p))
    } else {
      cat(sprintf("    %-28s %-13s F %8.4f numdf %d df %8.3f p %.4g\n", r$name, r$method,
                  r$F, r$numdf, r$df, r$p))
    }
  }
  invisible(m)
}

local_data <- function(name, filter = NULL) {
  list(path = file.path("data", name), filter = filter)
}
write_local <- function(d, name) {
  write.csv(d, file.path(data_dir, name), row.names = FALSE)
}
ids <- function(prefix, n, width = nchar(n)) sprintf(paste0("%s%0", width, "d"), prefix, seq_len(n))
r10 <- function(x) round(x, 10)
dm <- function(f, lev) sprintf('dummy(%s, "%s")', f, lev)
persys_formula <- function(resp, fixed, systems, extra = "") {
  paste0(resp, " ~ ", fixed, " + (1|segment_id)",
         paste0(" + (0 + ", dm("system", systems), "|run_id)", collapse = ""), extra)
}

# ---------------------------------------------------------------- synthetic datasets
# TER-like scales: mean 0.4, segment SD 0.2, residual SD 0.05; responses rounded to 10 decimals.
# Run effects are drawn per run; the competitor is 0.02 lower unless stated otherwise.
make_runs <- function(sys_n, run_sd) {
  do.call(rbind, lapply(names(sys_n), function(s) {
    data.frame(system = s, run_id = sprintf("%s_s%02d", s, seq_len(sys_n[[s]])),
               run_sd = run_sd[[s]], stringsAsFactors = FALSE)
  }))
}
make_rows <- function(runs, n_seg, shift, drop_frac = 0) {
  seg <- ids("seg", n_seg, 3)
  u_seg <- setNames(rnorm(n_seg, 0, 0.2), seg)
  u_run <- setNames(rnorm(nrow(runs), 0, runs$run_sd), runs$run_id)
  rows <- merge(runs[, c("run_id", "system")], data.frame(segment_id = seg), by = NULL)
  rows <- rows[order(rows$run_id, rows$segment_id, method = "radix"), ]
  if (drop_frac > 0) rows <- rows[runif(nrow(rows)) > drop_frac, ]
  rows$score <- r10(0.4 + shift[rows$system] + u_seg[rows$segment_id] + u_run[rows$run_id] +
                      rnorm(nrow(rows), 0, 0.05))
  rownames(rows) <- NULL
  rows[, c("segment_id", "run_id", "system", "score")]
}

# hetero_small: 18 stable baseline runs (run SD 0.002) vs 6 variable competitor runs (0.02).
set.seed(20250101)
write_local(make_rows(make_runs(c(A = 18, B = 6), c(A = 0.002, B = 0.02)), 20,
                      c(A = 0, B = -0.02)), "ddf_hetero_small.csv")
# equal_small: 6 vs 6 runs, equal run SD 0.01, 40 segments.
set.seed(20250102)
write_local(make_rows(make_runs(c(A = 6, B = 6), c(A = 0.01, B = 0.01)), 40,
                      c(A = 0, B = -0.02)), "ddf_equal_small.csv")
# unbalanced_small: 5 vs 9 runs (run SD 0.015 / 0.025), 40 segments, ~15% of rows dropped.
set.seed(20250103)
write_local(make_rows(make_runs(c(A = 5, B = 9), c(A = 0.015, B = 0.025)), 40,
                      c(A = 0, B = -0.02), drop_frac = 0.15), "ddf_unbalanced_small.csv")
# three_sys_small: A, B, C with 6, 5, 7 runs (run SD 0.005, 0.01, 0.02), 25 segments.
set.seed(20250104)
write_local(make_rows(make_runs(c(A = 6, B = 5, C = 7), c(A = 0.005, B = 0.01, C = 0.02)), 25,
                      c(A = 0, B = -0.01, C = -0.03)), "ddf_three_sys_small.csv")

# slopes_small: 8 runs per system, 30 segments, segment covariate d (standardized length-like,
# 2 decimals), run intercept SD 0.015 and run slope SD 0.015 (competitor: 0.02 / 0.025);
# competitor shift -0.02, common slope 0.01, competitor extra slope 0.015.
set.seed(20250105)
n_seg <- 30
seg <- ids("seg", n_seg, 3)
runs <- make_runs(c(A = 8, B = 8), c(A = 0.015, B = 0.02))
runs$slope_sd <- ifelse(runs$system == "A", 0.015, 0.025)
u_seg <- setNames(rnorm(n_seg, 0, 0.2), seg)
d_seg <- setNames(round(rnorm(n_seg), 2), seg)
u_run <- setNames(rnorm(nrow(runs), 0, runs$run_sd), runs$run_id)
s_run <- setNames(rnorm(nrow(runs), 0, runs$slope_sd), runs$run_id)
rows <- merge(runs[, c("run_id", "system")], data.frame(segment_id = seg), by = NULL)
rows <- rows[order(rows$run_id, rows$segment_id, method = "radix"), ]
rows$d <- unname(d_seg[rows$segment_id])
isB <- rows$system == "B"
rows$score <- r10(0.4 - 0.02 * isB + (0.01 + 0.015 * isB + s_run[rows$run_id]) * rows$d +
                    u_seg[rows$segment_id] + u_run[rows$run_id] + rnorm(nrow(rows), 0, 0.05))
rownames(rows) <- NULL
write_local(rows[, c("segment_id", "run_id", "system", "d", "score")], "ddf_slopes_small.csv")

# facet_small: baseline A with 6 seeds; competitor B as a grid of 3 lambda x 4 seeds, lambda
# offsets SD 0.02, seed-run SD 0.015 both systems, 25 segments. lambda = "none" for A.
facet_rows <- function(n_seg) {
  seg <- ids("seg", n_seg, 3)
  runs <- rbind(data.frame(system = "A", lambda = "none", seed = as.character(1:6)),
                expand.grid(system = "B", lambda = c("0.1", "0.5", "0.9"),
                            seed = as.character(1:4), stringsAsFactors = FALSE))
  runs$run_id <- ifelse(runs$system == "A", paste0("A_seed", runs$seed),
                        paste0("B_lam", runs$lambda, "_seed", runs$seed))
  u_seg <- setNames(rnorm(n_seg, 0, 0.2), seg)
  u_lam <- c(none = 0, setNames(rnorm(3, 0, 0.02), c("0.1", "0.5", "0.9")))
  u_run <- setNames(rnorm(nrow(runs), 0, 0.015), runs$run_id)
  rows <- merge(runs, data.frame(segment_id = seg), by = NULL)
  rows <- rows[order(rows$run_id, rows$segment_id, method = "radix"), ]
  rows$score <- r10(0.4 - 0.02 * (rows$system == "B") + u_lam[rows$lambda] +
                      u_seg[rows$segment_id] + u_run[rows$run_id] + rnorm(nrow(rows), 0, 0.05))
  rownames(rows) <- NULL
  rows[, c("segment_id", "run_id", "system", "lambda", "seed", "score")]
}
set.seed(20250106)
write_local(facet_rows(25), "ddf_facet_small.csv")

# ---------------------------------------------------------------- cases
both <- c("Satterthwaite", "Kenward-Roger")
satt <- "Satterthwaite"
f2 <- c("segment_id", "run_id", "system")
coef_tests <- function(fe) lapply(fe, function(n) tt(n, Lrow(fe, setNames(1, n))))

# 1. bundled example, TER (7,200 rows): Satterthwaite only.
ex <- local_data("example_ter.csv.gz")
ex_sys <- c("baseline", "competitor")
run_case("example_ter_persys", "example_ter", "persys", ex, f2, "ter",
         persys_formula("ter", "system", ex_sys), satt,
         function(fe) coef_tests(fe))
run_case("example_ter_pooled", "example_ter", "pooled", ex, f2, "ter",
         "ter ~ system + (1|segment_id) + (1|run_id)", satt,
         function(fe) coef_tests(fe))
run_case("example_ter_slopes", "example_ter", "slopes", ex, f2, "ter",
         "ter ~ system * length + (1|segment_id) + (1 + length || run_id)", satt,
         function(fe) c(coef_tests(fe),
                        list(ft("system_and_system:length",
                                Lrows(Lrow(fe, systemcompetitor = 1),
                                      Lrow(fe, `systemcompetitor:length` = 1))))))
# The default fit above stops with lme4's gradient warning (max|grad| 0.074 on the raw length
# scale); the same model fitted to a tight optimum for comparison (BOBYQA, rhoend 1e-10).
run_case("example_ter_slopes_bobyqa", "example_ter", "slopes", ex, f2, "ter",
         "ter ~ system * length + (1|segment_id) + (1 + length || run_id)", satt,
         function(fe) c(coef_tests(fe),
                        list(ft("system_and_system:length",
                                Lrows(Lrow(fe, systemcompetitor = 1),
                                      Lrow(fe, `systemcompetitor:length` = 1))))),
         control = lmerControl(optimizer = "bobyqa",
                               optCtrl = list(rhoend = 1e-10, maxfun = 1e5)),
         control_str = 'lmerControl(optimizer = "bobyqa", optCtrl = list(rhoend = 1e-10, maxfun = 1e5))',
         note = "same model as example_ter_slopes, tight optimizer: the optimum to compare against")

# 2. hetero_small
two_sys_tests <- function(fe) c(coef_tests(fe), list(ft("system_F", Lrow(fe, systemB = 1))))
# a two-system design with a run variance per system ("persys") and one shared ("pooled")
two_system_cases <- function(design) {
  d <- local_data(paste0("ddf_", design, ".csv"))
  run_case(paste0(design, "_persys"), design, "persys", d, f2, "score",
           persys_formula("score", "system", c("A", "B")), both, two_sys_tests)
  run_case(paste0(design, "_pooled"), design, "pooled", d, f2, "score",
           "score ~ system + (1|segment_id) + (1|run_id)", both, two_sys_tests)
}
two_system_cases("hetero_small")

# 3. equal_small
two_system_cases("equal_small")

# 4. slopes_small
ss <- local_data("ddf_slopes_small.csv")
slope_tests <- function(fe) c(coef_tests(fe), list(
  tt("slope_B", Lrow(fe, d = 1, `systemB:d` = 1)),
  tt("B_minus_A_at_d1", Lrow(fe, systemB = 1, `systemB:d` = 1)),
  ft("system_and_system:d", Lrows(Lrow(fe, systemB = 1), Lrow(fe, `systemB:d` = 1)))))
run_case("slopes_small", "slopes_small", "slopes", ss, f2, "score",
         "score ~ system * d + (1|segment_id) + (1 + d || run_id)", both, slope_tests)
run_case("slopes_small_persys", "slopes_small", "slopes_persys", ss, f2, "score",
         paste0(persys_formula("score", "system * d", c("A", "B")),
                " + (0 + dummy(system, \"A\"):d|run_id) + (0 + dummy(system, \"B\"):d|run_id)"),
         both, slope_tests)

# 5. unbalanced_small
two_system_cases("unbalanced_small")

# 6. three_sys_small
ts <- local_data("ddf_three_sys_small.csv")
three_tests <- function(fe) list(
  tt("B_minus_A", Lrow(fe, systemB = 1)),
  tt("C_minus_A", Lrow(fe, systemC = 1)),
  tt("C_minus_B", Lrow(fe, systemB = -1, systemC = 1)),
  tt("intercept", Lrow(fe, `(Intercept)` = 1)),
  ft("omnibus_system", Lrows(Lrow(fe, systemB = 1), Lrow(fe, systemC = 1))))
run_case("three_sys_small_persys", "three_sys_small", "persys", ts, f2, "score",
         persys_formula("score", "system", c("A", "B", "C")), both, three_tests)
run_case("three_sys_small_pooled", "three_sys_small", "pooled", ts, f2, "score",
         "score ~ system + (1|segment_id) + (1|run_id)", both, three_tests)

# 7. facet_small
fs <- local_data("ddf_facet_small.csv")
f3 <- c("segment_id", "run_id", "system", "lambda")
run_case("facet_small_persys_lambda", "facet_small", "persys_facet", fs, f3, "score",
         persys_formula("score", "system", c("A", "B"), " + (0 + dummy(system, \"B\")|lambda)"),
         both, two_sys_tests)
run_case("facet_small_persys", "facet_small", "persys", fs, f3, "score",
         persys_formula("score", "system", c("A", "B")), both, two_sys_tests)

# ---------------------------------------------------------------- Kenward-Roger at larger sizes
# Issue 23: pbkrtest references for the structured Kenward-Roger (infrepro/lmm/kr.py) on designs
# of 700 to 3,600 rows, one of them at a zero run-variance estimate. pbkrtest's vcovAdj forms
# n x n matrices (about 2.5 minutes at 3,600 rows), so these cases compute it once per model and
# derive every test from it exactly as lmerTest's contest does (get_KR1D: Lb_ddf on vcovAdj;
# contestMD: KRmodcomp = .KR_adjust on vcovAdj). Run them with GOLDEN_ONLY='^kr_'.
run_tests_lean <- function(m, tests, methods, msgs_env, vkr) {
  each_test(m, tests, methods, function(spec, L, method, rec) {
    if (method == "Satterthwaite") {
      r <- capture(contest(m, L, ddf = method, joint = spec$joint), msgs_env)
    }
    if (!spec$joint && method == "Satterthwaite") {
      rec[c("estimate", "se", "df", "t", "p")] <- list(r[["Estimate"]], r[["Std. Error"]],
                                                       r[["df"]], r[["t value"]],
                                                       r[["Pr(>|t|)"]])
    } else if (!spec$joint) {
      est <- drop(L %*% fixef(m))
      se <- sqrt(drop(L %*% as.matrix(vkr) %*% t(L)))
      df <- pbkrtest::Lb_ddf(L = drop(L), V0 = as.matrix(vcov(m)), Vadj = vkr)
      rec[c("estimate", "se", "df", "t", "p")] <- list(est, se, df, est / se,
                                                       2 * pt(abs(est / se), df, lower.tail = FALSE))
      rec$se_unadjusted <- sqrt(drop(L %*% as.matrix(vcov(m)) %*% t(L)))
    } else if (method == "Satterthwaite") {
      rec[c("F", "numdf", "df", "p")] <- list(r[["F value"]], as.integer(r[["NumDF"]]),
                                              r[["DenDF"]], r[["Pr(>F)"]])
    } else {
      st <- lapply(pbkrtest:::.KR_adjust(vkr, Phi = as.matrix(vcov(m)), L, beta = fixef(m),
                                         betaH = 0), c)
      kr <- pbkrtest:::.finalizeKR(st)$test
      f <- kr["FtestU", "stat"] * kr["Ftest", "F.scaling"]
      rec[c("F", "numdf", "df")] <- list(f, as.integer(kr[1L, "ndf"]), kr[1L, "ddf"])
      rec$p <- pf(f, kr[1L, "ndf"], kr[1L, "ddf"], lower.tail = FALSE)
      rec$F_unscaled <- kr["FtestU", "stat"]
      rec$F_scaling <- kr["Ftest", "F.scaling"]
    }
    rec
  })
}

# kr_boundary: 6 vs 6 runs, 60 segments; system A's runs have no run effect and its run
# variance is estimated at exactly zero (the first seed from 20250201 on where lme4 says so).
# kr_ten_two: 10 vs 2 runs, 200 segments (the issue's 10 vs 2 design, 2,400 rows).
# kr_slopes: 6 vs 6 runs, 150 segments, runs with slopes on the centred covariate d_c.
# kr_binned: 5 vs 5 runs, 160 segments in 4 bins of d, run effects per bin (1|run_id:dbin).
# kr_facet: A 6 seeds; B 3 lambda x 4 seeds; 120 segments; lambda intercepts for B.
# kr_large: 6 vs 6 runs, 300 segments (3,600 rows).
kr_rows <- function(sys_n, run_sd, n_seg, shift = c(A = 0, B = -0.02)) {
  make_rows(make_runs(sys_n, run_sd), n_seg, shift)
}
for (s in 20250201:20250299) {
  set.seed(s)
  d <- kr_rows(c(A = 6, B = 6), c(A = 0, B = 0.02), 60)
  d$segment_id <- factor(d$segment_id)
  d$run_id <- factor(d$run_id)
  m <- suppressMessages(lmer(persys_formula("score", "system", c("A", "B")), d))
  if (getME(m, "theta")[[2]] == 0 || getME(m, "theta")[[3]] == 0) break
}
d$segment_id <- as.character(d$segment_id)
d$run_id <- as.character(d$run_id)
write_local(d, "ddf_kr_boundary.csv")
set.seed(20250202)
write_local(kr_rows(c(A = 10, B = 2), c(A = 0.01, B = 0.01), 200), "ddf_kr_ten_two.csv")
set.seed(20250203)
write_local(kr_rows(c(A = 6, B = 6), c(A = 0.01, B = 0.015), 300), "ddf_kr_large.csv")
set.seed(20250204)
n_seg <- 150
seg <- ids("seg", n_seg, 3)
runs <- make_runs(c(A = 6, B = 6), c(A = 0.01, B = 0.02))
u_seg <- setNames(rnorm(n_seg, 0, 0.2), seg)
d_seg <- setNames(round(rnorm(n_seg), 2), seg)
u_run <- setNames(rnorm(nrow(runs), 0, runs$run_sd), runs$run_id)
s_run <- setNames(rnorm(nrow(runs), 0, 0.01), runs$run_id)
rows <- merge(runs[, c("run_id", "system")], data.frame(segment_id = seg), by = NULL)
rows <- rows[order(rows$run_id, rows$segment_id, method = "radix"), ]
rows$d <- unname(d_seg[rows$segment_id])
rows$d_c <- r10(rows$d - mean(rows$d))
rows$dbin <- paste0("b", findInterval(rows$d, quantile(d_seg, c(0.25, 0.5, 0.75))) + 1)
isB <- rows$system == "B"
rows$score <- r10(0.4 - 0.02 * isB + (0.01 + s_run[rows$run_id]) * rows$d +
                    u_seg[rows$segment_id] + u_run[rows$run_id] + rnorm(nrow(rows), 0, 0.05))
rownames(rows) <- NULL
write_local(rows[, c("segment_id", "run_id", "system", "d", "d_c", "dbin", "score")],
            "ddf_kr_slopes.csv")
set.seed(20250205)
write_local(facet_rows(120), "ddf_kr_facet.csv")

run_case_lean <- function(case, design, model, data_spec, factors, response, formula_str,
                          tests_fun) {
  if (nzchar(only) && !grepl(only, case)) return(invisible(NULL))
  runner <- function(m, tests, methods, msgs_env) {
    phi_a <- capture(pbkrtest::vcovAdj(m), msgs_env)  # keeps its P and W attributes
    msgs_env$vkr <- unname(as.matrix(phi_a))
    run_tests_lean(m, tests, methods, msgs_env, phi_a)
  }
  run_case(case, design, model, data_spec, factors, response, formula_str, both, tests_fun,
           runner = runner,
           note = "Kenward-Roger from one vcovAdj per model (run_tests_lean)")
}
kr_sys <- function(fe) list(tt("B_minus_A", Lrow(fe, systemB = 1)),
                            ft("system_F", Lrow(fe, systemB = 1)))
run_case_lean("kr_boundary_persys", "kr_boundary", "persys", local_data("ddf_kr_boundary.csv"),
              f2, "score", persys_formula("score", "system", c("A", "B")), kr_sys)
run_case_lean("kr_boundary_pooled", "kr_boundary", "pooled", local_data("ddf_kr_boundary.csv"),
              f2, "score", "score ~ system + (1|segment_id) + (1|run_id)", kr_sys)
run_case_lean("kr_ten_two_persys", "kr_ten_two", "persys", local_data("ddf_kr_ten_two.csv"),
              f2, "score", persys_formula("score", "system", c("A", "B")), kr_sys)
run_case_lean("kr_slopes", "kr_slopes", "slopes", local_data("ddf_kr_slopes.csv"), f2, "score",
              "score ~ system * d + (1|segment_id) + (1 + d_c || run_id)",
              function(fe) list(tt("B_minus_A", Lrow(fe, systemB = 1)),
                                tt("slope_B", Lrow(fe, d = 1, `systemB:d` = 1)),
                                ft("system_and_system:d",
                                   Lrows(Lrow(fe, systemB = 1), Lrow(fe, `systemB:d` = 1)))))
run_case_lean("kr_binned", "kr_slopes", "binned", local_data("ddf_kr_slopes.csv"),
              c(f2, "dbin"), "score",
              persys_formula("score", "system * dbin", c("A", "B"), " + (1|run_id:dbin)"),
              function(fe) {
                inter <- grep("^systemB:", fe, value = TRUE)
                list(tt("B_minus_A_b1", Lrow(fe, systemB = 1)),
                     ft("system_and_interaction",
                        do.call(Lrows, lapply(c("systemB", inter),
                                              function(n) Lrow(fe, setNames(1, n))))),
                     ft("interaction",
                        do.call(Lrows, lapply(inter, function(n) Lrow(fe, setNames(1, n))))))
              })
run_case_lean("kr_facet_persys_lambda", "kr_facet", "persys_facet", local_data("ddf_kr_facet.csv"),
              c(f2, "lambda"), "score",
              persys_formula("score", "system", c("A", "B"), " + (0 + dummy(system, \"B\")|lambda)"),
              kr_sys)
run_case_lean("kr_large_persys", "kr_large", "persys", local_data("ddf_kr_large.csv"), f2,
              "score", persys_formula("score", "system", c("A", "B")), kr_sys)

cat(sprintf("total %.1f s\n", (proc.time() - t_script)[["elapsed"]]))
