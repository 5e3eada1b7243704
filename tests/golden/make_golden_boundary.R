# Golden reference values for boundary and non-converged fits (docs/method.md §4.6.1): lme4's
# REML VCA `score ~ 1 + (1|segment_id) + (1|seed)` of one system whose runs are
#   identical    all runs give the same score on every segment (the criterion has no minimum),
#   boundary     runs identical up to segment-level noise whose run means are shrunk, so the
#                seed variance lands on the boundary theta = 0 (a converged, singular fit),
#   constant     one score everywhere (lme4 returns a criterion of -Inf and warns),
#   one_segment  four runs on a single segment (lme4 refuses the segment term),
# recording what lme4 says: its fit, its convergence messages or its error.
#
# Usage (from the repository root):
#   Rscript tests/golden/make_golden_boundary.R
#
# Writes tests/golden/data/boundary.csv and tests/golden/fixtures_boundary/<case>.json.

source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE))),
                 "golden_common.R"))  # beside this script (it sets golden_dir, data_dir)

fixture_dir <- file.path(golden_dir, "fixtures_boundary")
dir.create(fixture_dir, showWarnings = FALSE, recursive = TRUE)
r10 <- function(x) round(x, 10)

# ---------------------------------------------------------------- data
set.seed(20261126)
n_seg <- 30
seg <- sprintf("s%02d", seq_len(n_seg))
u_seg <- setNames(rnorm(n_seg, 0, 0.2), seg)
grid <- function(system, seeds, segments) {
  g <- expand.grid(segment_id = segments, seed = as.character(seeds), stringsAsFactors = FALSE)
  g$system <- system
  g$run_id <- paste(system, g$seed, sep = "_")
  g
}
identical_runs <- grid("identical", 1:4, seg)
identical_runs$score <- r10(0.4 + u_seg[identical_runs$segment_id])
boundary <- grid("boundary", 1:5, seg)
eps <- rnorm(nrow(boundary), 0, 0.05)
eps <- eps - 0.75 * ave(eps, boundary$run_id)  # run means shrunk: the seed variance is at 0
boundary$score <- r10(0.4 + u_seg[boundary$segment_id] + eps)
constant <- grid("constant", 1:4, seg)
constant$score <- 0.5
one_segment <- grid("one_segment", 1:4, seg[1])
one_segment$score <- r10(0.4 + rnorm(4, 0, 0.05))
rows <- rbind(identical_runs, boundary, constant, one_segment)
cols <- c("system", "run_id", "seed", "segment_id", "score")
write.csv(rows[, cols], file.path(data_dir, "boundary.csv"), row.names = FALSE)

# ---------------------------------------------------------------- fits
formula_str <- "score ~ 1 + (1|segment_id) + (1|seed)"
spec <- function(system) {
  list(source = "local", path = file.path("data", "boundary.csv"),
       filter = list(system = system), recipe = NULL)
}

run_case <- function(system) {
  data_spec <- spec(system)
  d <- load_case_data(data_spec, c("segment_id", "seed", "run_id"))
  caught <- new_messages()
  m <- tryCatch(capture(lmer(as.formula(formula_str), data = d, REML = TRUE), caught),
                error = function(e) e)
  msgs <- caught$msgs
  out <- list(case = system,
              data = list(source = data_spec$source, path = data_spec$path,
                          filter = list(system = arr(system)), recipe = NULL),
              factors = arr(c("segment_id", "seed", "run_id")), response = "score",
              formula = formula_str, reml = TRUE)
  if (inherits(m, "error")) {
    out$outcome <- "error"
    out$error <- conditionMessage(m)
  } else {
    conv <- m@optinfo$conv$lme4
    if (length(conv$messages) > 0) msgs <- c(msgs, paste0("conv: ", unlist(conv$messages)))
    vc <- as.data.frame(VarCorr(m))
    theta <- getME(m, "theta")
    out$outcome <- "fit"
    out$loglik <- as.numeric(logLik(m))
    out$deviance_criterion <- REMLcrit(m)
    out$variance_components <- as.list(setNames(vc$vcov, vc$grp))
    out$theta <- arr(unname(theta))
    out$theta_names <- arr(sub("\\.\\(Intercept\\)$", "", names(theta)))
    out$singular <- isSingular(m, tol = 1e-4)
    # converged: no lme4 convergence message besides the singular-fit one (checkConv's
    # gradient and Hessian checks passed)
    other <- setdiff(unlist(conv$messages), "boundary (singular) fit: see help('isSingular')")
    out$lme4_converged <- length(other) == 0
    out$lme4_code <- if (is.null(conv$code)) 0L else as.integer(conv$code)
  }
  out$lme4_messages <- arr(unique(msgs))
  out$lme4_version <- as.character(packageVersion("lme4"))
  out$r_version <- R.version.string
  write_json_file(out, file.path(fixture_dir, paste0(system, ".json")))
  cat(sprintf("%-12s %s %s\n", system, out$outcome,
              if (is.null(out$error)) paste(out$lme4_messages, collapse = " | ") else out$error))
}

for (system in c("identical", "boundary", "constant", "one_segment")) run_case(system)
