# cpt.meanvar's call path in R 4.x, timed on this machine by bench_analysis.py:
#   Rscript cpt_meanvar.R PELT_SO SERIES_BIN PASSES
# SERIES_BIN holds records (label length as int32, label bytes, series length
# as int32, doubles). Prints tab-separated lines: per label "time, label, CPU
# ms per series (best of PASSES passes)", then "cpts, label, index, cpts..."
# for every series, so the caller can check R's changepoints against its own.
args <- commandArgs(trailingOnly = TRUE)
dyn.load(args[1])
passes <- as.integer(args[3])

cpt_meanvar <- function(x, pen) {
    n <- length(x)
    if (n < 4) stop("Minimum segment length is too large to include a change in this data")
    # data_input: the summary statistics, as changepoint builds them.
    sumstat <- cbind(c(0, cumsum(x)), c(0, cumsum(x^2)), cumsum(c(0, (x - mean(x))^2)))
    out <- .C("coldrun_pelt_meanvar", "meanvar.norm", as.double(sumstat), as.integer(n),
              as.double(pen), 2L, lastchangelike = double(n + 1), lastchangecpts = integer(n + 1),
              cpts = integer(n), ncpts = integer(1))
    cpts <- sort(out$cpts[seq_len(out$ncpts)])
    # param.est: mean and MLE variance of every segment.
    starts <- c(1, head(cpts, -1) + 1)
    means <- numeric(length(cpts))
    variances <- numeric(length(cpts))
    for (j in seq_along(cpts)) {
        seg <- x[starts[j]:cpts[j]]
        means[j] <- mean(seg)
        variances[j] <- (var(seg) * (length(seg) - 1)) / length(seg)
    }
    list(cpts = cpts, means = means, variances = variances)
}

con <- file(args[2], "rb")
labels <- character(0)
series <- list()
repeat {
    len <- readBin(con, "integer", 1, size = 4)
    if (length(len) == 0) break
    labels <- c(labels, rawToChar(readBin(con, "raw", len)))
    n <- readBin(con, "integer", 1, size = 4)
    series[[length(series) + 1]] <- readBin(con, "double", n, size = 8)
}
close(con)

cat("version", R.version.string, sep = "\t")
cat("\n")
for (label in unique(labels)) {
    xs <- series[labels == label]
    best <- Inf
    for (p in seq_len(passes)) {
        t0 <- proc.time()
        for (x in xs) cpt_meanvar(x, 15 * log(length(x)))
        used <- proc.time() - t0  # CPU time of this (single-threaded) R process
        best <- min(best, used[["user.self"]] + used[["sys.self"]])
    }
    cat("time", label, format(1000 * best / length(xs), digits = 6), sep = "\t")
    cat("\n")
    for (i in seq_along(xs)) {
        x <- xs[[i]]
        cat("cpts", label, i, cpt_meanvar(x, 15 * log(length(x)))$cpts, sep = "\t")
        cat("\n")
    }
}
