# Power of the headline test by refitting lme4 + lmerTest on every simulated experiment, the way
# simr does: the golden value for infrepro's planning (docs/method.md §4d.1, issue 21).
# Design: 2 systems x 5 runs, 50 segments, segment SD 0.096, run SD 0.03 per system, residual
# SD 0.068, competitor better by 0.045; alpha 0.05, directional rejections. Here boundary fits
# (a run variance estimated 0) are rare, so Kenward-Roger and Satterthwaite give the same t and
# df (balanced design); Satterthwaite is used because pbkrtest's KR takes seconds per draw.
# Run: Rscript tests/golden/make_golden_power.R [draws]   (writes fixtures_planning/power.json)
suppressPackageStartupMessages({ library(lme4); library(lmerTest) })
args <- commandArgs(trailingOnly = TRUE)
draws <- if (length(args)) as.integer(args[1]) else 500L
set.seed(20261126)
n_runs <- 5; segs <- 50; sd_seg <- 0.096; sd_run <- 0.03; sd_res <- 0.068; effect <- 0.045
run <- factor(rep(sprintf("r%02d", 1:(2 * n_runs)), each = segs))
system <- factor(rep(c("A", "B"), each = n_runs * segs))
segment <- factor(rep(1:segs, times = 2 * n_runs))
f <- y ~ system + (1 | segment) + (0 + dummy(system, "A") | run) + (0 + dummy(system, "B") | run)
hits <- 0L; singular <- 0L
start <- proc.time()[["elapsed"]]
for (i in seq_len(draws)) {
  y <- 0.5 + effect * (system == "B") + rnorm(segs, 0, sd_seg)[segment] +
    rnorm(2 * n_runs, 0, sd_run)[run] + rnorm(length(run), 0, sd_res)
  m <- suppressMessages(suppressWarnings(lmer(f, data = data.frame(y, system, segment, run))))
  singular <- singular + isSingular(m)
  tab <- summary(m, ddf = "Satterthwaite")$coefficients
  if (tab["systemB", "Pr(>|t|)"] < 0.05 && tab["systemB", "Estimate"] > 0) hits <- hits + 1L
}
seconds <- proc.time()[["elapsed"]] - start
power <- hits / draws
out <- sprintf(paste0('{"draws": %d, "power": %.4f, "mc_se": %.4f, "singular": %d, ',
  '"seconds": %.1f, "seconds_per_draw": %.4f, "n_runs": %d, "segments": %d, ',
  '"sd_segment": %g, "sd_run": %g, "sd_residual": %g, "effect": %g, "ddf": "Satterthwaite", ',
  '"lme4": "%s", "lmerTest": "%s"}'),
  draws, power, sqrt(power * (1 - power) / draws), singular, seconds, seconds / draws, n_runs,
  segs, sd_seg, sd_run, sd_res, effect, packageVersion("lme4"), packageVersion("lmerTest"))
dir <- file.path(dirname(sub("--file=", "", grep("--file=", commandArgs(), value = TRUE))),
                 "fixtures_planning")
writeLines(out, file.path(dir, "power.json"))
cat(out, "\n")
