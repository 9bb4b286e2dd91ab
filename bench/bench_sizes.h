/*
 * bench_sizes.h: the --sizes option of the MPI benchmark programs
 * (pingpong.c, coll_bench.c, rma_bench.c, io_bench.c), and their options
 * that name a list of things (rma_bench's --ops, io_bench's --patterns), in
 * one place.  Plain C, no MPI: the programs
 * build with any MPI's mpicc, and this header with them.
 */
#ifndef SHMPI_BENCH_SIZES_H
#define SHMPI_BENCH_SIZES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "4096", "64k" or "4m" in bytes, or -1 when it is not a size up to `max`. */
static long bench_parse_size(const char *s, long max) {
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end == s || v < 0) return -1;
    if (*end == 'k' || *end == 'K') {
        v *= 1024;
        ++end;
    } else if (*end == 'm' || *end == 'M') {
        v *= 1024 * 1024;
        ++end;
    }
    return *end == '\0' && v <= max ? v : -1;
}

/* Fills sizes[0..cap) from a comma list ("8,64,1k") or a power-of-two range
 * ("MIN:MAX"), each size at most `max`.  Returns how many, or -1 after
 * printing why to stderr (prefixed with `prog`) unless `quiet`. */
static int bench_parse_sizes(const char *prog, const char *arg, long max, long *sizes, int cap,
                             int quiet) {
    char buf[512];
    int n = 0;
    if (strlen(arg) >= sizeof buf) {
        if (!quiet) fprintf(stderr, "%s: --sizes '%s' is too long\n", prog, arg);
        return -1;
    }
    strcpy(buf, arg);
    char *colon = strchr(buf, ':');
    if (colon != NULL) {
        *colon = '\0';
        long lo = bench_parse_size(buf, max), hi = bench_parse_size(colon + 1, max);
        if (lo <= 0 || hi < lo) {
            if (!quiet)
                fprintf(stderr, "%s: --sizes '%s' is not a range MIN:MAX with 0 < MIN <= MAX <= %ld\n",
                        prog, arg, max);
            return -1;
        }
        for (long s = lo; s <= hi && n < cap; s *= 2) sizes[n++] = s;
        return n;
    }
    for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
        long s = bench_parse_size(tok, max);
        if (s < 0 || n == cap) {
            if (!quiet)
                fprintf(stderr, "%s: --sizes: '%s' is not a size in bytes up to %ld (or more than %d sizes)\n",
                        prog, tok, max, cap);
            return -1;
        }
        sizes[n++] = s;
    }
    return n > 0 ? n : -1;
}

/* Fills idx[] with the positions in names[0..count) of a comma list of
 * names ("put,get"), each at most once per entry of `idx` (count entries).
 * Returns how many, or -1 after printing why to stderr (prefixed with
 * `prog` and the option `what`) unless `quiet`. */
static inline int bench_parse_names(const char *prog, const char *what, const char *arg, const char *const *names,
                                    int count, int *idx, int quiet) {
    char buf[256];
    int n = 0;
    if (strlen(arg) >= sizeof buf) {
        if (!quiet) fprintf(stderr, "%s: %s '%s' is too long\n", prog, what, arg);
        return -1;
    }
    strcpy(buf, arg);
    for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
        int found = -1;
        for (int k = 0; k < count; ++k) {
            if (strcmp(tok, names[k]) == 0) found = k;
        }
        if (found < 0 || n == count) {
            if (!quiet) fprintf(stderr, "%s: %s: '%s' is not one of this program's names\n", prog, what, tok);
            return -1;
        }
        idx[n++] = found;
    }
    return n > 0 ? n : -1;
}

#endif
