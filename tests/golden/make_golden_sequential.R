# Group-sequential reference values from rpact for infrepro.stats.sequential (docs/method.md §4e):
# Lan-DeMets O'Brien-Fleming-type (asOF) and Pocock-type (asP) efficacy boundaries for 2-5 looks
# at equal and unequal information rates, one-sided alpha 0.025 and two-sided alpha 0.05; a
# non-binding z futility bound; user spending for a plan stopped early and one overrun (the last
# look spends what is left, the correlations use the observed fractions); the characteristics
# (drift for 80 % power, expected information) and power / expected subjects of getPowerMeans
# with the normal approximation.
# Run: setarch -R Rscript tests/golden/make_golden_sequential.R   (writes fixtures_sequential/)
file_arg <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
source(file.path(dirname(normalizePath(sub("^--file=", "", file_arg))), "golden_common.R"))
suppressPackageStartupMessages(library(rpact))
out_dir <- file.path(golden_dir, "fixtures_sequential")
dir.create(out_dir, showWarnings = FALSE)

versions <- list(r = R.version.string, rpact = as.character(packageVersion("rpact")))

# rpact's spending functions (as its C++ getSpendingValueCpp), to form user spending
spend <- function(t, alpha, type, sided) {
  t <- pmin(t, 1)
  if (type == "asOF") return(2 * sided * (1 - pnorm(qnorm(1 - alpha / (2 * sided)) / sqrt(t))))
  if (type == "asP") return(alpha * log(1 + (exp(1) - 1) * t))
  stop("unknown type")
}

characteristics <- function(d) {
  ch <- getDesignCharacteristics(d)
  list(shift = ch$shift, inflation_factor = ch$inflationFactor, power = arr(ch$power),
       rejection_probabilities = arr(ch$rejectionProbabilities),
       futility_probabilities = if (length(ch$futilityProbabilities))
         arr(ch$futilityProbabilities) else NULL,
       average_sample_number1 = ch$averageSampleNumber1,
       average_sample_number01 = ch$averageSampleNumber01,
       average_sample_number0 = ch$averageSampleNumber0, n_fixed = ch$nFixed)
}

power_means <- function(d, alternative, st_dev, max_subjects) {
  p <- getPowerMeans(d, groups = 2, normalApproximation = TRUE, alternative = alternative,
                     stDev = st_dev, maxNumberOfSubjects = max_subjects)
  list(alternative = alternative, st_dev = st_dev, max_number_of_subjects = max_subjects,
       overall_reject = p$overallReject, reject_per_stage = arr(as.numeric(p$rejectPerStage)),
       futility_per_stage = if (length(p$futilityPerStage))
         arr(as.numeric(p$futilityPerStage)) else NULL,
       expected_number_of_subjects = p$expectedNumberOfSubjects)
}

write_case <- function(name, d, call, extra = list()) {
  rec <- c(list(case = name, call = call, k_max = d$kMax, alpha = d$alpha, sided = d$sided,
                type_of_design = d$typeOfDesign,
                information_rates = arr(d$informationRates),
                futility_bounds = if (d$sided == 1 && any(d$futilityBounds > -6))
                  arr(d$futilityBounds) else NULL,
                binding_futility = d$bindingFutility,
                critical_values = arr(d$criticalValues), alpha_spent = arr(d$alphaSpent),
                stage_levels = arr(d$stageLevels)),
           extra, list(versions = versions))
  write_json_file(rec, file.path(out_dir, paste0(name, ".json")))
}

rates <- list(equal = NULL, unequal = list(`2` = c(0.4, 1), `3` = c(0.3, 0.7, 1),
                                            `4` = c(0.2, 0.45, 0.8, 1),
                                            `5` = c(0.15, 0.3, 0.55, 0.8, 1)))
for (type in c("asOF", "asP")) {
  for (sided in c(1, 2)) {
    alpha <- if (sided == 1) 0.025 else 0.05
    for (k in 2:5) {
      for (spacing in c("equal", "unequal")) {
        ir <- if (spacing == "equal") (1:k) / k else rates$unequal[[as.character(k)]]
        d <- getDesignGroupSequential(kMax = k, alpha = alpha, sided = sided,
                                      typeOfDesign = type, informationRates = ir)
        name <- sprintf("%s_%s_k%d_%s", type, if (sided == 1) "one" else "two", k, spacing)
        call <- sprintf(paste0("getDesignGroupSequential(kMax = %d, alpha = %g, sided = %d, ",
                               "typeOfDesign = \"%s\", informationRates = c(%s))"),
                        k, alpha, sided, type, paste(ir, collapse = ", "))
        extra <- list(characteristics = characteristics(d))
        if (k %in% c(3, 5)) extra$power_means <- power_means(d, 0.5, 1, 100)
        write_case(name, d, call, extra)
      }
    }
  }
}

# non-binding z futility bounds (one-sided): efficacy as without them; characteristics and
# power with the futility stops obeyed
for (type in c("asOF", "asP")) {
  d <- getDesignGroupSequential(kMax = 3, alpha = 0.025, sided = 1, typeOfDesign = type,
                                futilityBounds = c(0, 0.5), bindingFutility = FALSE)
  call <- sprintf(paste0("getDesignGroupSequential(kMax = 3, alpha = 0.025, sided = 1, ",
                         "typeOfDesign = \"%s\", futilityBounds = c(0, 0.5), ",
                         "bindingFutility = FALSE)"), type)
  write_case(sprintf("%s_one_k3_futility", type), d, call,
             list(characteristics = characteristics(d),
                  power_means = power_means(d, 0.5, 1, 100)))
}

# observed fractions: a plan of maximum information 1 stopped early at 0.8, and one overrun to
# 1.2; the last look spends what is left. rpact: user spending at the fractions relative to
# the last look (only their ratios enter the correlations).
for (type in c("asOF", "asP")) {
  for (sided in c(1, 2)) {
    alpha <- if (sided == 1) 0.025 else 0.05
    for (scenario in c("stopped_early", "overrun")) {
      observed <- if (scenario == "stopped_early") c(0.3, 0.55, 0.8) else c(0.4, 0.7, 1.2)
      k <- length(observed)
      user <- c(spend(observed[-k], alpha, type, sided), alpha)
      d <- getDesignGroupSequential(kMax = k, alpha = alpha, sided = sided,
                                    typeOfDesign = "asUser", userAlphaSpending = user,
                                    informationRates = observed / observed[k])
      name <- sprintf("%s_%s_%s", type, if (sided == 1) "one" else "two", scenario)
      call <- sprintf(paste0("getDesignGroupSequential(kMax = %d, alpha = %g, sided = %d, ",
                             "typeOfDesign = \"asUser\", userAlphaSpending = <%s at the ",
                             "observed fractions, alpha last>, informationRates = ",
                             "observed / observed[k])"), k, alpha, sided, type)
      write_case(name, d, call, list(observed_fractions = arr(observed), spending = type))
    }
  }
}
cat("wrote", length(list.files(out_dir, pattern = "json$")), "fixtures to", out_dir, "\n")
