# Golden reference fits from R lme4 for infrepro's mixed-model engine (infrepro.lmm).
#
# Usage (from the repository root):
#   Rscript tests/golden/make_golden.R [path/to/resources]
# The data directory defaults to the repository's resources/ (Kreutzer et al. 2020 data in
# resources/kreutzer2020/, bundled with its licence). Fixtures made before it was bundled said
# data.source "shared" (the same files, then kept outside the repository); they now say "resources".
#
# Writes one JSON fixture per case to tests/golden/fixtures/<case>.json and the synthetic and
# lme4-bundled datasets to tests/golden/data/<name>.csv. Every fit reads its data back from the
# CSV file, through the same loader rules that the Python tests use (see README.md), so both sides
# fit exactly the same numbers. Default lmer control throughout, as a user would run it.

source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE))),
                 "golden_common.R"))  # beside this script (it sets golden_dir, data_dir)

# ---------------------------------------------------------------- paths
args <- commandArgs(trailingOnly = TRUE)
fixture_dir <- file.path(golden_dir, "fixtures")
dir.create(fixture_dir, showWarnings = FALSE, recursive = TRUE)
dir.create(data_dir, showWarnings = FALSE, recursive = TRUE)
resources_dir <- if (length(args) >= 1) args[[1]] else
  file.path(dirname(dirname(normalizePath(golden_dir))), "resources")
have_kreutzer <- dir.exists(file.path(resources_dir, "kreutzer2020"))
if (!have_kreutzer) {
  stop("Kreutzer data not found at ", file.path(resources_dir, "kreutzer2020"))
}

# ---------------------------------------------------------------- term-name mapping
# Keys of random-effect terms as written in the formula, in formula order: (1|a:b) -> "a:b";
# nested (1|a/b) -> "a", "a:b" (lme4 itself calls the latter "b:a").
formula_term_keys <- function(formula_str) {
  rhs <- as.character(as.formula(formula_str))[3]
  terms <- regmatches(rhs, gregexpr("\\(\\s*1\\s*\\|[^)]*\\)", rhs))[[1]]
  keys <- character(0)
  for (t in terms) {
    g <- gsub("\\s+", "", sub("^\\(\\s*1\\s*\\|", "", sub("\\)$", "", t)))
    if (grepl("/", g)) {
      parts <- strsplit(g, "/", fixed = TRUE)[[1]]
      for (i in seq_along(parts)) keys <- c(keys, paste(parts[seq_len(i)], collapse = ":"))
    } else {
      keys <- c(keys, g)
    }
  }
  keys
}

map_group <- function(grp, keys) {
  comp <- sort(strsplit(grp, ":", fixed = TRUE)[[1]])
  hit <- keys[vapply(keys, function(k) identical(sort(strsplit(k, ":", fixed = TRUE)[[1]]),
                                                   comp), logical(1))]
  if (length(hit) != 1) stop("cannot map lme4 group '", grp, "' to a formula term")
  hit
}

# ---------------------------------------------------------------- fitting one case
r_version <- R.version.string
lme4_version <- as.character(packageVersion("lme4"))

# Optional environment variable GOLDEN_ONLY: a regular expression; only matching cases are
# refitted (the local CSV files are always rewritten). Unset: all cases.
only <- Sys.getenv("GOLDEN_ONLY", "")

run_case <- function(case, data_spec, factors, response, formula_str, reml) {
  if (nzchar(only) && !grepl(only, case)) return(invisible(NULL))
  d <- load_case_data(data_spec, factors)
  caught <- new_messages()
  form <- as.formula(formula_str)
  t0 <- proc.time()
  m <- capture(lmer(form, data = d, REML = reml), caught)
  elapsed <- (proc.time() - t0)[["elapsed"]]
  msgs <- unique(fit_messages(m, caught$msgs))

  keys <- formula_term_keys(formula_str)
  vc <- as.data.frame(VarCorr(m))
  vc_map <- setNames(vc$vcov, vc$grp)
  variance_components <- list()
  for (k in keys) {
    grp <- vc$grp[vc$grp != "Residual"][vapply(vc$grp[vc$grp != "Residual"],
                                                 map_group, character(1), keys = keys) == k]
    variance_components[[k]] <- unname(vc_map[[grp]])
  }
  variance_components[["Residual"]] <- unname(vc_map[["Residual"]])

  theta <- getME(m, "theta")
  theta_grp <- sub("\\.\\(Intercept\\)$", "", names(theta))
  theta_names <- vapply(theta_grp, map_group, character(1), keys = keys)

  ng <- ngrps(m)
  ngroups <- list()
  ng_keys <- vapply(names(ng), map_group, character(1), keys = keys)
  for (k in keys) ngroups[[k]] <- as.integer(ng[[names(ng)[ng_keys == k]]])

  fe <- fixef(m)
  V <- as.matrix(vcov(m))
  V <- V[names(fe), names(fe), drop = FALSE]
  crit <- if (isREML(m)) REMLcrit(m) else deviance(m)
  ll <- as.numeric(logLik(m))

  out <- list(
    case = case,
    data = list(source = data_spec$source, path = data_spec$path,
                filter = if (is.null(data_spec$filter)) NULL else
                  lapply(data_spec$filter, function(v) arr(as.character(v))),
                recipe = data_spec$recipe),
    factors = arr(factors),
    response = response,
    formula = formula_str,
    reml = reml,
    loglik = ll,
    deviance_criterion = crit,
    fixed_effects = as.list(fe),
    fixed_se = as.list(setNames(sqrt(diag(V)), names(fe))),
    fixed_cov = unname(V),
    variance_components = variance_components,
    theta = arr(unname(theta)),
    theta_names = arr(unname(theta_names)),
    sigma = sigma(m),
    nobs = as.integer(nobs(m)),
    ngroups = ngroups,
    singular = isSingular(m, tol = 1e-4),
    lme4_messages = arr(msgs),
    fit_seconds = round(elapsed, 3),
    lme4_version = lme4_version,
    r_version = r_version
  )
  write_json_file(out, file.path(fixture_dir, paste0(case, ".json")))
  cat(sprintf("%-44s logLik %.6f  crit %.6f  %6.2fs  singular=%s%s\n", case, ll, crit, elapsed,
              out$singular, if (length(msgs)) paste0("  [", paste(msgs, collapse = " | "), "]")
              else ""))
  invisible(m)
}

bundled <- function(file, filter = NULL, recipe = NULL) {
  list(source = "resources", path = file.path("kreutzer2020", file), filter = filter, recipe = recipe)
}
local_data <- function(name, filter = NULL, recipe = NULL) {
  list(source = "local", path = file.path("data", paste0(name, ".csv")), filter = filter,
       recipe = recipe)
}
write_local <- function(d, name) {
  write.csv(d, file.path(data_dir, paste0(name, ".csv")), row.names = FALSE)
}

# ---------------------------------------------------------------- local datasets
# lme4-bundled data, written as-is.
data("Pastes", package = "lme4")
data("Penicillin", package = "lme4")
write_local(data.frame(strength = Pastes$strength, batch = as.character(Pastes$batch),
                       cask = as.character(Pastes$cask)), "pastes")
write_local(data.frame(diameter = Penicillin$diameter, plate = as.character(Penicillin$plate),
                       sample = as.character(Penicillin$sample)), "penicillin")

ids <- function(prefix, n, width = nchar(n)) sprintf(paste0("%s%0", width, "d"), prefix, seq_len(n))
r10 <- function(x) round(x, 10)  # short, exactly reproducible CSV values

# Synthetic nested design: 200 segments x 4 lambda x 3 seeds; seed labels repeat across lambda,
# so the seed effect is only identified as nested in lambda.
set.seed(20240601)
seg <- ids("s", 200, 3)
lam <- c("0.01", "0.1", "1", "10")
grid <- expand.grid(seed = c("1", "2", "3"), lambda = lam, seg = seg, stringsAsFactors = FALSE)
u_seg <- setNames(rnorm(200, 0, 0.2), seg)
u_lam <- setNames(rnorm(4, 0, 0.03), lam)
ls_lev <- unique(paste(grid$lambda, grid$seed, sep = ":"))
u_ls <- setNames(rnorm(length(ls_lev), 0, 0.02), ls_lev)
grid$score <- r10(0.4 + u_seg[grid$seg] + u_lam[grid$lambda] +
                    u_ls[paste(grid$lambda, grid$seed, sep = ":")] + rnorm(nrow(grid), 0, 0.05))
write_local(grid[, c("seg", "lambda", "seed", "score")], "synth_nested")

# Synthetic singular design: 200 segments x 2 systems x 4 seeds, zero true seed/run variance.
set.seed(20240602)
seg <- ids("s", 200, 3)
grid <- expand.grid(seed = c("1", "2", "3", "4"), system = c("baseline", "competitor"), seg = seg,
                    stringsAsFactors = FALSE)
grid$run_id <- paste(grid$system, grid$seed, sep = "_")
u_seg <- setNames(rnorm(200, 0, 0.2), seg)
# The run means of the noise are shrunk to a quarter, so the between-run mean square falls well
# below its expectation under zero run variance and the estimate lands on the boundary theta = 0.
# (Centring the noise exactly within runs makes the design degenerate: lme4's default optimizer
# then stops after a few evaluations far from the optimum, so that is avoided here.)
eps <- rnorm(nrow(grid), 0, 0.05)
eps <- eps - 0.75 * ave(eps, grid$run_id)
grid$score <- r10(0.4 - 0.01 * (grid$system == "competitor") + u_seg[grid$seg] + eps)
write_local(grid[, c("run_id", "system", "seed", "seg", "score")], "synth_singular")

# Synthetic unbalanced design: baseline 5 seeds; competitor 3 lambda x 2 noise x 3 seeds with
# three runs missing; then ~10% of the (run, segment) rows dropped at random.
set.seed(20240603)
n_seg <- 150
seg <- ids("s", n_seg, 3)
base_runs <- data.frame(system = "baseline", lambda = "none", noise = "none",
                        seed = as.character(1:5), stringsAsFactors = FALSE)
comp_runs <- expand.grid(seed = as.character(1:3), noise = c("0.1", "0.3"),
                         lambda = c("0.01", "0.1", "1"), stringsAsFactors = FALSE)
comp_runs$system <- "competitor"
comp_runs <- comp_runs[-c(4, 11, 17), c("system", "lambda", "noise", "seed")]
runs <- rbind(base_runs, comp_runs)
runs$run_id <- ifelse(runs$system == "baseline", paste0("baseline_seed", runs$seed),
                      paste0("competitor_lam", runs$lambda, "_noise", runs$noise, "_seed",
                             runs$seed))
u_seg <- setNames(rnorm(n_seg, 0, 0.2), seg)
u_lam <- c(none = 0, setNames(rnorm(3, 0, 0.03), c("0.01", "0.1", "1")))
u_noise <- c(none = 0, setNames(rnorm(2, 0, 0.02), c("0.1", "0.3")))
u_seed <- setNames(rnorm(5, 0, 0.01), as.character(1:5))
rows <- merge(runs, data.frame(seg = seg, stringsAsFactors = FALSE), by = NULL)
rows <- rows[order(rows$run_id, rows$seg), ]
rows <- rows[runif(nrow(rows)) > 0.10, ]
rows$score <- r10(0.4 - 0.02 * (rows$system == "competitor") + u_seg[rows$seg] +
                    u_lam[rows$lambda] + u_noise[rows$noise] + u_seed[rows$seed] +
                    rnorm(nrow(rows), 0, 0.05))
write_local(rows[, c("run_id", "system", "lambda", "noise", "seed", "seg", "score")],
            "synth_unbalanced")

# Synthetic large crossed design: 400 segments x 150 raters, 10 random raters per segment.
set.seed(20240604)
seg <- ids("s", 400, 3)
rat <- ids("r", 150, 3)
rows <- do.call(rbind, lapply(seg, function(s) {
  data.frame(seg = s, rater = sort(sample(rat, 10)), stringsAsFactors = FALSE)
}))
u_seg <- setNames(rnorm(400, 0, 0.2), seg)
u_rat <- setNames(rnorm(150, 0, 0.05), rat)
rows$score <- r10(0.4 + u_seg[rows$seg] + u_rat[rows$rater] + rnorm(nrow(rows), 0, 0.05))
write_local(rows, "synth_crossed")

# ---------------------------------------------------------------- cases
ter <- "data_ter.csv.gz"
partial <- "data_hyperparameter-marking_partial.csv.gz"
full <- "data_hyperparameter-marking_full.csv.gz"
hp7 <- paste("ter ~ 1 + (1|sentence_id) + (1|learning_rate) + (1|seed) + (1|encoder_dropout)",
             "+ (1|decoder_dropout) + (1|decoder_dropout_hidden) + (1|delta_scheme)")
hp_factors <- c("sentence_id", "learning_rate", "seed", "encoder_dropout", "decoder_dropout",
                "decoder_dropout_hidden", "delta_scheme")

if (have_kreutzer) {
  # 1. system comparison on data_ter (ML)
  run_case("kr20_ter_system_h1", bundled(ter), c("sentence_id", "system"), "ter",
           "ter ~ system + (1|sentence_id)", FALSE)
  run_case("kr20_ter_system_h0", bundled(ter), c("sentence_id"), "ter",
           "ter ~ 1 + (1|sentence_id)", FALSE)
  # 2. conditional on binned source length (ML)
  run_case("kr20_ter_lenclass_interaction", bundled(ter, recipe = "len_class"),
           c("sentence_id", "system", "len_class"), "ter",
           "ter ~ system * len_class + (1|sentence_id)", FALSE)
  run_case("kr20_ter_lenclass_additive", bundled(ter, recipe = "len_class"),
           c("sentence_id", "system", "len_class"), "ter",
           "ter ~ system + len_class + (1|sentence_id)", FALSE)
  run_case("kr20_ter_lenclass_only", bundled(ter, recipe = "len_class"),
           c("sentence_id", "len_class"), "ter",
           "ter ~ len_class + (1|sentence_id)", FALSE)
  # 3. numeric covariate (ML)
  run_case("kr20_ter_srclength_interaction", bundled(ter), c("sentence_id", "system"), "ter",
           "ter ~ system * src_length + (1|sentence_id)", FALSE)
  # 4. Marking VCA (REML) and run-aware system comparison (ML)
  run_case("kr20_ter_marking_vca", bundled(ter, filter = list(system = "Marking")),
           c("sentence_id", "replication"), "ter",
           "ter ~ 1 + (1|sentence_id) + (1|replication)", TRUE)
  run_case("kr20_ter_runaware_h1", bundled(ter), c("sentence_id", "system", "replication"),
           "ter", "ter ~ system + (1|sentence_id) + (1|system:replication)", FALSE)
  run_case("kr20_ter_runaware_h0", bundled(ter), c("sentence_id", "system", "replication"),
           "ter", "ter ~ 1 + (1|sentence_id) + (1|system:replication)", FALSE)
  # 5. 7-factor crossed VCA (REML) on the partial and the full grid
  run_case("kr20_hp_partial_vca7", bundled(partial), hp_factors, "ter", hp7, TRUE)
  # 6. interaction random terms on the partial grid (REML)
  run_case("kr20_hp_partial_seg_x_seed", bundled(partial), c("sentence_id", "seed"), "ter",
           "ter ~ 1 + (1|sentence_id) + (1|seed) + (1|sentence_id:seed)", TRUE)
  run_case("kr20_hp_partial_lr_x_seed", bundled(partial),
           c("sentence_id", "learning_rate", "seed"), "ter",
           "ter ~ 1 + (1|sentence_id) + (1|learning_rate) + (1|seed) + (1|learning_rate:seed)",
           TRUE)
  # 12. annotation G-study (REML)
  ann_f <- c("sentence", "rater", "occasion", "mode")
  run_case("kr20_annotation_gstudy", bundled("data_annotation.csv.gz"), ann_f, "score",
           "score ~ 1 + (1|sentence) + (1|rater) + (1|occasion) + (1|mode)", TRUE)
  run_case("kr20_annotation_gstudy_sxr", bundled("data_annotation.csv.gz"), ann_f, "score",
           "score ~ 1 + (1|sentence) + (1|rater) + (1|occasion) + (1|mode) + (1|sentence:rater)",
           TRUE)
}

# 7. nested terms
run_case("pastes_nested_reml", local_data("pastes"), c("batch", "cask"), "strength",
         "strength ~ 1 + (1|batch/cask)", TRUE)
run_case("pastes_nested_ml", local_data("pastes"), c("batch", "cask"), "strength",
         "strength ~ 1 + (1|batch/cask)", FALSE)
run_case("synth_nested_reml", local_data("synth_nested"), c("seg", "lambda", "seed"), "score",
         "score ~ 1 + (1|seg) + (1|lambda/seed)", TRUE)
# 8. crossed
run_case("penicillin_crossed_reml", local_data("penicillin"), c("plate", "sample"), "diameter",
         "diameter ~ 1 + (1|plate) + (1|sample)", TRUE)
run_case("penicillin_crossed_ml", local_data("penicillin"), c("plate", "sample"), "diameter",
         "diameter ~ 1 + (1|plate) + (1|sample)", FALSE)
# 9. singular fits
run_case("synth_singular_vca_reml",
         local_data("synth_singular", filter = list(system = "competitor")), c("seg", "seed"),
         "score", "score ~ 1 + (1|seg) + (1|seed)", TRUE)
run_case("synth_singular_h1_ml", local_data("synth_singular"), c("seg", "system", "run_id"),
         "score", "score ~ system + (1|seg) + (1|run_id)", FALSE)
run_case("synth_singular_h0_ml", local_data("synth_singular"), c("seg", "run_id"),
         "score", "score ~ 1 + (1|seg) + (1|run_id)", FALSE)
# 10. unbalanced design with missing cells
run_case("synth_unbalanced_h1_ml", local_data("synth_unbalanced"), c("seg", "system", "run_id"),
         "score", "score ~ system + (1|seg) + (1|run_id)", FALSE)
run_case("synth_unbalanced_h0_ml", local_data("synth_unbalanced"), c("seg", "run_id"),
         "score", "score ~ 1 + (1|seg) + (1|run_id)", FALSE)
run_case("synth_unbalanced_vca_reml",
         local_data("synth_unbalanced", filter = list(system = "competitor")),
         c("seg", "lambda", "noise", "seed"), "score",
         "score ~ 1 + (1|seg) + (1|lambda) + (1|noise) + (1|seed)", TRUE)
# 11. two large crossed factors
run_case("synth_crossed_reml", local_data("synth_crossed"), c("seg", "rater"), "score",
         "score ~ 1 + (1|seg) + (1|rater)", TRUE)
run_case("synth_crossed_ml", local_data("synth_crossed"), c("seg", "rater"), "score",
         "score ~ 1 + (1|seg) + (1|rater)", FALSE)

# 5 (continued). The full 324-run grid last: it is the slow one (the benchmark's bar).
if (have_kreutzer) {
  run_case("kr20_hp_full_vca7", bundled(full), hp_factors, "ter", hp7, TRUE)
}
