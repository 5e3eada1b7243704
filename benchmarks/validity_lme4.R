# Fit the models of benchmarks/validity.py's agreement check with R lme4 (default lmer control).
#
# Usage: Rscript benchmarks/validity_lme4.R manifest.csv results.csv
# manifest.csv: id, data (a CSV file), formula, reml (TRUE/FALSE), system ("" = all rows).
# results.csv (long): id, component, variance, loglik, singular; one row per variance component.

suppressPackageStartupMessages(library(lme4))
args <- commandArgs(trailingOnly = TRUE)
manifest <- read.csv(args[[1]], stringsAsFactors = FALSE, na.strings = character(0))
cache <- list()
rows <- list()
for (i in seq_len(nrow(manifest))) {
  m <- manifest[i, ]
  if (is.null(cache[[m$data]])) {
    cache[[m$data]] <- read.csv(m$data, stringsAsFactors = FALSE)
  }
  d <- cache[[m$data]]
  if (!is.na(m$system) && nzchar(m$system)) d <- d[d$system == m$system, , drop = FALSE]
  fit <- tryCatch(
    suppressMessages(suppressWarnings(
      lmer(as.formula(m$formula), data = d, REML = as.logical(m$reml))
    )),
    error = function(e) {
      message("lme4 could not fit ", m$formula, " (", m$id, "): ", conditionMessage(e))
      NULL
    }
  )
  if (is.null(fit)) next
  vc <- as.data.frame(VarCorr(fit))
  rows[[length(rows) + 1]] <- data.frame(
    id = m$id, component = vc$grp, variance = sprintf("%.17g", vc$vcov),
    loglik = sprintf("%.17g", as.numeric(logLik(fit))), singular = isSingular(fit)
  )
}
out <- do.call(rbind, rows)
write.csv(out, args[[2]], row.names = FALSE)
