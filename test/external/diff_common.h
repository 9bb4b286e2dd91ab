/*
 * diff_common.h: what dtype_diff.c, comm_diff.c and coll_diff.c share.
 * Header-only: each program is one file that external-checks.sh builds with
 * shmpi's, MPICH's and Open MPI's mpicc alike.
 */
#ifndef SHMPI_TEST_EXTERNAL_DIFF_COMMON_H
#define SHMPI_TEST_EXTERNAL_DIFF_COMMON_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define DIFF_UNUSED __attribute__((unused))

/* Room for the description of a type. */
enum { DESC = 8192 };

/* The random stream; each program seeds it per type or per round, so that
 * every rank and every implementation draws the same arguments. */
static uint64_t state;

static DIFF_UNUSED unsigned rnd(unsigned n)
{
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((state >> 33) % n);
}

static DIFF_UNUSED int irnd(int lo, int hi) { return lo + (int)rnd((unsigned)(hi - lo + 1)); }

/* Appends printf-style text to the description d (DESC bytes). */
static DIFF_UNUSED void add(char *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static DIFF_UNUSED void add(char *d, const char *fmt, ...)
{
    const size_t n = strlen(d);
    if (n + 1 >= DESC) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d + n, DESC - n, fmt, ap);
    va_end(ap);
}

/* PREFIX.RANK, opened to add to (a run that starts at a later round adds to
 * what the runs before it wrote) and line-buffered (a hang or crash loses
 * no finished line); ends the job when it cannot be opened. */
static DIFF_UNUSED FILE *open_rank_file(const char *prefix, int rank)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.%d", prefix, rank);
    FILE *f = fopen(path, "a");
    if (f == NULL) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    setvbuf(f, NULL, _IOLBF, 0);
    return f;
}

#endif
