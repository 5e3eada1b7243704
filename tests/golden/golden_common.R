# Shared by the golden-value scripts (make_golden*.R): packages and locale, the JSON writer, the
# capture of warnings and messages and the data loader. Each script sources it as
#   source(file.path(<this folder>, "golden_common.R"))
# and may set `resources_dir` (make_golden.R: data in the repository's resources/) before
# loading a case whose data source is "resources".

suppressPackageStartupMessages({
  library(lme4)
  library(jsonlite)
})
invisible(Sys.setlocale("LC_COLLATE", "C"))
options(warn = 1)

# ---------------------------------------------------------------- paths
# this folder: from Rscript's --file= (any working directory), else tests/golden from the root
golden_dir <- local({
  file_arg <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
  if (length(file_arg) == 1) dirname(normalizePath(sub("^--file=", "", file_arg))) else
    file.path("tests", "golden")
})
data_dir <- file.path(golden_dir, "data")

# ---------------------------------------------------------------- JSON writer
# A small serializer so that every double is written with the shortest decimal string that
# round-trips exactly (jsonlite stops at 15 significant digits). Vectors wrapped in arr() are
# always JSON arrays; other length-1 atomics are scalars; named lists are objects.
arr <- function(x) structure(x, class = c("json_array", class(x)))

num_str <- function(x) {
  vapply(x, function(v) {
    if (is.na(v) || !is.finite(v)) return("null")
    for (d in 15:17) {
      s <- sprintf(paste0("%.", d, "g"), v)
      if (as.numeric(s) == v) return(s)
    }
    s
  }, character(1))
}

to_json <- function(x) {
  if (is.null(x)) return("null")
  force_array <- inherits(x, "json_array")
  if (force_array) class(x) <- setdiff(class(x), "json_array")
  if (is.matrix(x)) {
    rows <- vapply(seq_len(nrow(x)), function(i) to_json(arr(unname(x[i, ]))), character(1))
    return(paste0("[", paste(rows, collapse = ","), "]"))
  }
  if (is.list(x)) {
    if (length(x) == 0) return(if (is.null(names(x)) || force_array) "[]" else "{}")
    parts <- vapply(x, to_json, character(1))
    if (!is.null(names(x)) && !force_array) {
      keys <- vapply(names(x), function(k) as.character(toJSON(k, auto_unbox = TRUE)),
                     character(1))
      return(paste0("{", paste0(keys, ":", parts, collapse = ","), "}"))
    }
    return(paste0("[", paste(parts, collapse = ","), "]"))
  }
  if (length(x) == 0) return("[]")
  if (!is.null(names(x)) && !force_array) {
    return(to_json(as.list(x)))
  }
  if (is.logical(x)) {
    vals <- ifelse(is.na(x), "null", ifelse(x, "true", "false"))
  } else if (is.numeric(x)) {
    vals <- if (is.integer(x)) as.character(x) else num_str(x)
  } else {
    vals <- vapply(as.character(x), function(s) as.character(toJSON(s, auto_unbox = TRUE)),
                   character(1))
  }
  vals <- unname(vals)
  if (length(vals) == 1 && !force_array) return(vals)
  paste0("[", paste(vals, collapse = ","), "]")
}

write_json_file <- function(x, path) {
  txt <- prettify(to_json(x), indent = 2)
  writeLines(txt, path, useBytes = TRUE)
}

# ---------------------------------------------------------------- messages
# Where capture() collects a fit's messages: an environment with msgs empty.
new_messages <- function() {
  env <- new.env()
  env$msgs <- character(0)
  env
}

# Evaluate expr, collecting its warnings and messages in msgs_env$msgs (as lme4 prints them:
# "warning: ..." / "message: ...") instead of printing them.
capture <- function(expr, msgs_env) {
  withCallingHandlers(expr,
    warning = function(w) {
      msgs_env$msgs <- c(msgs_env$msgs, paste0("warning: ", conditionMessage(w)))
      invokeRestart("muffleWarning")
    },
    message = function(mm) {
      msgs_env$msgs <- c(msgs_env$msgs, paste0("message: ", trimws(conditionMessage(mm))))
      invokeRestart("muffleMessage")
    })
}

# msgs and what the fitted model m says about its convergence ("conv: ...") and optimizer
# ("optimizer: ...").
fit_messages <- function(m, msgs) {
  conv <- m@optinfo$conv$lme4$messages
  if (length(conv) > 0) msgs <- c(msgs, paste0("conv: ", conv))
  if (length(m@optinfo$warnings) > 0) {
    msgs <- c(msgs, paste0("optimizer: ", unlist(m@optinfo$warnings)))
  }
  msgs
}

# ---------------------------------------------------------------- data loading
# Loader contract (mirrored by the Python tests):
#   1. read the CSV; the `factors` columns as character strings, everything else numeric;
#   2. keep rows whose column value (as string) is in the filter list (if any);
#   3. apply the recipe (if any);
#   4. turn each `factors` column into a factor with levels sorted in C (byte) order.
apply_recipe <- function(d, recipe) {
  if (is.null(recipe)) return(d)
  if (recipe == "len_class") {
    len <- as.numeric(d$src_length)
    d$len_class <- ifelse(len <= 15, "short", ifelse(len <= 55, "typical", "very long"))
    return(d)
  }
  stop("unknown recipe: ", recipe)
}

load_case_data <- function(spec, factors) {
  path <- if (identical(spec$source, "resources")) file.path(resources_dir, spec$path) else
    file.path(golden_dir, spec$path)
  header <- names(read.csv(path, nrows = 1, check.names = FALSE))
  cls <- ifelse(header %in% c(factors, names(spec$filter)), "character", NA)
  d <- read.csv(path, colClasses = cls, check.names = FALSE, stringsAsFactors = FALSE)
  if (!is.null(spec$filter)) {
    for (col in names(spec$filter)) {
      d <- d[as.character(d[[col]]) %in% spec$filter[[col]], , drop = FALSE]
    }
  }
  d <- apply_recipe(d, spec$recipe)
  for (f in factors) {
    d[[f]] <- factor(d[[f]], levels = sort(unique(as.character(d[[f]])), method = "radix"))
  }
  rownames(d) <- NULL
  d
}
