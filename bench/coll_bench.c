/*
 * coll_bench: latency of the blocking collectives, from 8 B to 4 MiB.
 *
 * Written against the standard MPI API only, so that the same file builds with
 * shmpi's mpicc, Open MPI's and MPICH's, and the numbers compare like for like
 * (scripts/bench-compare.sh runs it with all three).
 *
 * What it does, for each collective and each size:
 *   1. One untimed call whose result every rank checks in full.
 *   2. Warm-up calls, bounded by a quarter of the time budget; their mean
 *      calibrates the number of iterations of step 3.
 *   3. `--reps` repetitions of `iters` iterations.  In the default mode
 *      (`--mode osu`, as the OSU micro-benchmarks measure) each iteration
 *      rewrites this rank's input (untimed), enters MPI_Barrier (untimed),
 *      then times one call with MPI_Wtime.  With `--mode loop` the calls run
 *      back to back, each after a stamp into its input (one word per 4 KiB
 *      and the last word), and the loop is timed as a whole.
 *   4. For each repetition the ranks' mean times per call are combined into
 *      their average and their maximum over ranks; rank 0 reports the median
 *      over repetitions of each, and the best repetition's average.
 *
 * Sizes are per rank: the message of Bcast, the vector of Reduce/Allreduce/
 * Scan/Exscan and each rank's block of Reduce_scatter(_block) (MPI_DOUBLE,
 * MPI_SUM), the block each rank contributes to or gets from Gather(v)/
 * Scatter(v)/Allgather(v)/Alltoall(v) (MPI_BYTE; the v-variants with equal
 * counts).  Roots are rank 0.  Barrier is measured once (size 0).
 *
 * Output: a commented header (MPI library, ranks, host CPUs, every rank's
 * placement, mode, and in osu mode what an empty timed region costs: two
 * MPI_Wtime calls, a floor under every number) and a table, or with --csv
 * the same header lines and CSV.  --per-rank adds a comment line after each
 * row with every rank's median time per call: in the osu mode a root that
 * must wait for the others (Reduce, Gather) or that the others wait for
 * (Bcast) shows where the mean comes from.  A second line gives every
 * rank's context switches per timed iteration (getrusage, voluntary and
 * not, the osu mode's untimed barrier included): with more ranks than
 * CPUs each switch costs microseconds, and their count is what an
 * oversubscribed small collective's time is made of.
 * Exit status 0, 1 for a usage error, 2 when a check of the results failed.
 */
#define _GNU_SOURCE 1 /* sched_getaffinity, sched_getcpu */

#include <mpi.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#ifdef __linux__
#include <sched.h>
#endif

#include "bench_sizes.h"
#include "bench_util.h"

enum {
    MAX_SIZES = 64,
    PLACE_LEN = 128,
    MIN_ITERS = 8,
};

enum op {
    OP_BARRIER,
    OP_BCAST,
    OP_REDUCE,
    OP_ALLREDUCE,
    OP_GATHER,
    OP_GATHERV,
    OP_SCATTER,
    OP_SCATTERV,
    OP_ALLGATHER,
    OP_ALLGATHERV,
    OP_ALLTOALL,
    OP_ALLTOALLV,
    OP_REDUCE_SCATTER,
    OP_REDUCE_SCATTER_BLOCK,
    OP_SCAN,
    OP_EXSCAN,
    NUM_OPS,
};

static const char *const op_names[NUM_OPS] = {
    "barrier",   "bcast",     "reduce",         "allreduce",
    "gather",    "gatherv",   "scatter",        "scatterv",
    "allgather", "allgatherv", "alltoall",      "alltoallv",
    "reduce_scatter", "reduce_scatter_block",   "scan",
    "exscan",
};

struct options {
    long sizes[MAX_SIZES];
    int nsizes;
    int ops[NUM_OPS];
    int nops;
    long iters;  /* iterations per repetition for small sizes */
    long warmup; /* warm-up calls for small sizes */
    int reps;
    double time; /* seconds per (collective, size), approximate */
    int loop;    /* --mode loop */
    int csv;
    int dup;     /* --comm dup */
    int per_rank; /* --per-rank */
};

/* The communicator the collectives run on: MPI_COMM_WORLD, or with
 * --comm dup a duplicate of it (libraries dup the world first thing, so
 * this is what their collectives see). */
static MPI_Comm bench_comm = MPI_COMM_WORLD;

static int quiet = 0;
static void complain(const char *fmt, ...) {
    if (quiet) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

static void usage(FILE *out, const char *argv0) {
    fprintf(out,
            "usage: %s [options]\n"
            "  --ops LIST       comma list of collectives (default all):\n"
            "                   barrier,bcast,reduce,allreduce,gather,gatherv,scatter,\n"
            "                   scatterv,allgather,allgatherv,alltoall,alltoallv,\n"
            "                   reduce_scatter,reduce_scatter_block,scan,exscan\n"
            "  --sizes LIST     bytes per rank: a comma list (8,64,1024) or a power-of-two\n"
            "                   range MIN:MAX (default 8:4m); suffixes k and m allowed;\n"
            "                   reductions round up to whole doubles\n"
            "  --iters N        iterations per repetition for small sizes (default 1000)\n"
            "  --warmup N       warm-up calls for small sizes (default 100)\n"
            "  --reps R         timed repetitions (default 5)\n"
            "  --time S         approximate seconds per collective and size (default 0.3)\n"
            "  --mode osu|loop  osu: barrier, then one timed call, input rewritten before\n"
            "                   each (default); loop: back-to-back calls timed together\n"
            "  --comm world|dup run on MPI_COMM_WORLD (default) or on a duplicate of it\n"
            "  --per-rank       after each row, every rank's median time per call and its\n"
            "                   context switches per timed iteration\n"
            "  --csv            print CSV instead of a table\n",
            argv0);
}

/* Fills opt->sizes from "a,b,c" or "min:max"; returns 0 or prints why not. */
static int parse_sizes(const char *arg, struct options *opt) {
    opt->nsizes = bench_parse_sizes("coll_bench", arg, 1L << 28, opt->sizes, MAX_SIZES, quiet);
    return opt->nsizes > 0 ? 0 : -1;
}

static int parse_ops(const char *arg, struct options *opt) {
    char buf[512];
    if (strlen(arg) >= sizeof buf) return -1;
    strcpy(buf, arg);
    opt->nops = 0;
    for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
        int found = -1;
        for (int k = 0; k < NUM_OPS; ++k) {
            if (strcmp(tok, op_names[k]) == 0) found = k;
        }
        if (found < 0 || opt->nops == NUM_OPS) {
            complain("coll_bench: --ops: '%s' is not a collective this program measures\n", tok);
            return -1;
        }
        opt->ops[opt->nops++] = found;
    }
    return opt->nops > 0 ? 0 : -1;
}

/* Option `name` takes one of two words: 0 for `no`, 1 for `yes`, -1 (said
 * on stderr) for anything else. */
static int parse_choice(const char *name, const char *v, const char *no, const char *yes) {
    if (strcmp(v, no) == 0) return 0;
    if (strcmp(v, yes) == 0) return 1;
    complain("coll_bench: %s '%s' is neither %s nor %s\n", name, v, no, yes);
    return -1;
}

/* Returns 0 and fills `opt`, 1 for --help, -1 for a usage error. */
static int parse_args(int argc, char **argv, struct options *opt) {
    opt->nsizes = 0;
    for (long s = 8; s <= 4L * 1024 * 1024; s *= 2) opt->sizes[opt->nsizes++] = s;
    opt->nops = NUM_OPS;
    for (int k = 0; k < NUM_OPS; ++k) opt->ops[k] = k;
    opt->iters = 1000;
    opt->warmup = 100;
    opt->reps = 5;
    opt->time = 0.3;
    opt->loop = 0;
    opt->csv = 0;
    opt->dup = 0;
    opt->per_rank = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return 1;
        if (strcmp(a, "--csv") == 0) {
            opt->csv = 1;
            continue;
        }
        if (strcmp(a, "--per-rank") == 0) {
            opt->per_rank = 1;
            continue;
        }
        if (v == NULL) {
            complain("coll_bench: unknown option or missing value: '%s'\n", a);
            return -1;
        }
        ++i;
        if (strcmp(a, "--sizes") == 0) {
            if (parse_sizes(v, opt) != 0) return -1;
        } else if (strcmp(a, "--ops") == 0) {
            if (parse_ops(v, opt) != 0) return -1;
        } else if (strcmp(a, "--iters") == 0) {
            opt->iters = atol(v);
        } else if (strcmp(a, "--warmup") == 0) {
            opt->warmup = atol(v);
        } else if (strcmp(a, "--reps") == 0) {
            opt->reps = atoi(v);
        } else if (strcmp(a, "--time") == 0) {
            opt->time = atof(v);
        } else if (strcmp(a, "--comm") == 0) {
            opt->dup = parse_choice("--comm", v, "world", "dup");
            if (opt->dup < 0) return -1;
        } else if (strcmp(a, "--mode") == 0) {
            opt->loop = parse_choice("--mode", v, "osu", "loop");
            if (opt->loop < 0) return -1;
        } else {
            complain("coll_bench: unknown option '%s'\n", a);
            return -1;
        }
    }
    if (opt->iters < 1 || opt->warmup < 0 || opt->reps < 1 || opt->time <= 0) {
        complain("coll_bench: --iters, --reps and --time must be positive; --warmup must not be "
                 "negative\n");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ data */

/* The buffers of one (collective, size), allocated for the largest size. */
struct buffers {
    unsigned char *send; /* this rank's input */
    unsigned char *recv; /* output */
    int *counts;         /* v-variants: every rank's count */
    int *displs;
};

static int is_reduction(int op) {
    return op == OP_REDUCE || op == OP_ALLREDUCE || op == OP_REDUCE_SCATTER ||
           op == OP_REDUCE_SCATTER_BLOCK || op == OP_SCAN || op == OP_EXSCAN;
}

/* True when this rank's input holds one block per rank, not one block. */
static int input_per_rank(int op) {
    return op == OP_REDUCE_SCATTER || op == OP_REDUCE_SCATTER_BLOCK || op == OP_SCATTER ||
           op == OP_SCATTERV || op == OP_ALLTOALL || op == OP_ALLTOALLV;
}

/* Elements (doubles for reductions, bytes otherwise) per rank at `size`. */
static long elems_of(int op, long size) {
    return is_reduction(op) ? (size + 7) / 8 : size;
}

/* The value rank r contributes at element i, version v (all exactly
 * representable and small, so sums of them are exact in any order). */
static double dvalue(int r, long i, uint64_t v) {
    return (double)((uint64_t)(r + 1) * 3 + (uint64_t)i * 7 + v * 5) - (double)((i + (long)v) % 1024) * 8;
}
static unsigned char bvalue(int r, long i, uint64_t v) {
    return (unsigned char)(r * 29 + i * 7 + v * 13 + (i >> 12));
}

/* Rewrites this rank's whole input for version v. */
static void fill(int op, unsigned char *send, long elems, int rank, int nranks, uint64_t v) {
    if (is_reduction(op)) {
        long n = input_per_rank(op) ? elems * nranks : elems;
        double *d = (double *)send;
        for (long i = 0; i < n; ++i) d[i] = dvalue(rank, i, v);
    } else {
        long n = input_per_rank(op) ? elems * nranks : elems;
        for (long i = 0; i < n; ++i) send[i] = bvalue(rank, i, v);
    }
}

/* Stamps version v into the input: one word per 4 KiB and the last word. */
static void stamp(int op, unsigned char *send, long elems, int nranks, uint64_t v) {
    long bytes = is_reduction(op) ? elems * 8 : elems;
    if (input_per_rank(op)) bytes *= nranks;
    if (bytes < 8) {
        send[0] = (unsigned char)v;
        return;
    }
    double stampv = (double)(v & 0xffff);
    for (long off = 0; off + 8 <= bytes; off += BENCH_STAMP_STRIDE) memcpy(send + off, &stampv, 8);
    memcpy(send + bytes - 8, &stampv, 8);
}

static void run_once(int op, struct buffers *b, long elems, int nranks) {
    const int n = (int)elems;
    switch (op) {
        case OP_BARRIER:
            MPI_Barrier(bench_comm);
            break;
        case OP_BCAST:
            MPI_Bcast(b->send, n, MPI_BYTE, 0, bench_comm);
            break;
        case OP_REDUCE:
            MPI_Reduce(b->send, b->recv, n, MPI_DOUBLE, MPI_SUM, 0, bench_comm);
            break;
        case OP_ALLREDUCE:
            MPI_Allreduce(b->send, b->recv, n, MPI_DOUBLE, MPI_SUM, bench_comm);
            break;
        case OP_GATHER:
            MPI_Gather(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, 0, bench_comm);
            break;
        case OP_GATHERV:
            MPI_Gatherv(b->send, n, MPI_BYTE, b->recv, b->counts, b->displs, MPI_BYTE, 0,
                        bench_comm);
            break;
        case OP_SCATTER:
            MPI_Scatter(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, 0, bench_comm);
            break;
        case OP_SCATTERV:
            MPI_Scatterv(b->send, b->counts, b->displs, MPI_BYTE, b->recv, n, MPI_BYTE, 0,
                         bench_comm);
            break;
        case OP_ALLGATHER:
            MPI_Allgather(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, bench_comm);
            break;
        case OP_ALLGATHERV:
            MPI_Allgatherv(b->send, n, MPI_BYTE, b->recv, b->counts, b->displs, MPI_BYTE,
                           bench_comm);
            break;
        case OP_ALLTOALL:
            MPI_Alltoall(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, bench_comm);
            break;
        case OP_ALLTOALLV:
            MPI_Alltoallv(b->send, b->counts, b->displs, MPI_BYTE, b->recv, b->counts, b->displs,
                          MPI_BYTE, bench_comm);
            break;
        case OP_REDUCE_SCATTER:
            MPI_Reduce_scatter(b->send, b->recv, b->counts, MPI_DOUBLE, MPI_SUM, bench_comm);
            break;
        case OP_REDUCE_SCATTER_BLOCK:
            MPI_Reduce_scatter_block(b->send, b->recv, n, MPI_DOUBLE, MPI_SUM, bench_comm);
            break;
        case OP_SCAN:
            MPI_Scan(b->send, b->recv, n, MPI_DOUBLE, MPI_SUM, bench_comm);
            break;
        case OP_EXSCAN:
            MPI_Exscan(b->send, b->recv, n, MPI_DOUBLE, MPI_SUM, bench_comm);
            break;
    }
    (void)nranks;
}

/* Step 1: checks the result of one call on version v; returns failures. */
static long check(int op, struct buffers *b, long elems, int rank, int nranks, uint64_t v) {
    long bad = 0;
    const double *dr = (const double *)b->recv;
    switch (op) {
        case OP_BARRIER:
            break;
        case OP_BCAST:
            for (long i = 0; i < elems; ++i) bad += b->send[i] != bvalue(0, i, v);
            break;
        case OP_REDUCE:
        case OP_ALLREDUCE:
        case OP_SCAN:
        case OP_EXSCAN:
            if (op == OP_REDUCE && rank != 0) break;
            if (op == OP_EXSCAN && rank == 0) break; /* undefined on rank 0 */
            for (long i = 0; i < elems; ++i) {
                double want = 0;
                int last = op == OP_SCAN ? rank : op == OP_EXSCAN ? rank - 1 : nranks - 1;
                for (int r = 0; r <= last; ++r) want += dvalue(r, i, v);
                bad += dr[i] != want;
            }
            break;
        case OP_REDUCE_SCATTER:
        case OP_REDUCE_SCATTER_BLOCK:
            for (long i = 0; i < elems; ++i) {
                double want = 0;
                for (int r = 0; r < nranks; ++r) want += dvalue(r, rank * elems + i, v);
                bad += dr[i] != want;
            }
            break;
        case OP_GATHER:
        case OP_GATHERV:
        case OP_ALLGATHER:
        case OP_ALLGATHERV:
            if ((op == OP_GATHER || op == OP_GATHERV) && rank != 0) break;
            for (int r = 0; r < nranks; ++r) {
                for (long i = 0; i < elems; ++i) bad += b->recv[r * elems + i] != bvalue(r, i, v);
            }
            break;
        case OP_SCATTER:
        case OP_SCATTERV:
            for (long i = 0; i < elems; ++i) bad += b->recv[i] != bvalue(0, rank * elems + i, v);
            break;
        case OP_ALLTOALL:
        case OP_ALLTOALLV:
            for (int r = 0; r < nranks; ++r) {
                for (long i = 0; i < elems; ++i) {
                    bad += b->recv[r * elems + i] != bvalue(r, rank * elems + i, v);
                }
            }
            break;
    }
    return bad;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct result {
    long iters;
    double avg_med, max_med, avg_min; /* microseconds per call */
    long failures;
    double *ranks; /* rank 0: each rank's median over reps (nranks entries) */
    double *switches; /* rank 0: each rank's context switches per timed iteration */
};

/* Context switches of this process so far, voluntary (it blocked) and
 * involuntary (preempted, or it yielded with CPU-mates ready to run). */
static long switches_so_far(void) {
    struct rusage u;
    if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
    return u.ru_nvcsw + u.ru_nivcsw;
}

/* Steps 1-4 for one collective and size.  Collective over all ranks. */
static struct result measure(const struct options *opt, int op, long size, struct buffers *b,
                             int rank, int nranks, uint64_t *version, double *ranks, double *switches) {
    struct result res = {0, 0, 0, 0, 0, ranks, switches};
    const long elems = elems_of(op, size);
    if (op == OP_GATHERV || op == OP_ALLGATHERV || op == OP_SCATTERV || op == OP_ALLTOALLV ||
        op == OP_REDUCE_SCATTER) {
        for (int r = 0; r < nranks; ++r) {
            b->counts[r] = (int)elems;
            b->displs[r] = (int)(r * elems);
        }
    }

    /* 1. One checked call (the root's input is what a bcast sends). */
    uint64_t v = (*version)++;
    fill(op, b->send, elems, rank, nranks, v);
    run_once(op, b, elems, nranks);
    res.failures = check(op, b, elems, rank, nranks, v);
    if (res.failures > 0) {
        fprintf(stderr, "coll_bench: %s, %ld bytes: rank %d got %ld wrong elements\n", op_names[op],
                size, rank, res.failures);
    }

    /* Big messages get fewer calls: about 64 MiB per rank per repetition. */
    long per_call = size * (op == OP_ALLTOALL || op == OP_ALLTOALLV || op == OP_ALLGATHER ||
                                    op == OP_ALLGATHERV ? nranks : 1);
    long cap = (64L * 1024 * 1024) / (per_call > 0 ? per_call : 1);
    long iters = opt->iters < cap ? opt->iters : cap;
    if (iters < MIN_ITERS) iters = MIN_ITERS;
    long warmup = opt->warmup < cap / 4 ? opt->warmup : cap / 4;
    if (warmup < 2) warmup = 2;

    /* 2. Warm-up; rank 0's pace decides for everyone. */
    MPI_Barrier(bench_comm);
    double t0 = MPI_Wtime();
    long done = 0;
    for (; done < warmup; ++done) {
        stamp(op, b->send, elems, nranks, (*version)++);
        run_once(op, b, elems, nranks);
        if (done % 8 == 7) {
            int stop = MPI_Wtime() - t0 > opt->time / 4;
            MPI_Bcast(&stop, 1, MPI_INT, 0, bench_comm);
            if (stop) {
                ++done;
                break;
            }
        }
    }
    double per = (MPI_Wtime() - t0) / (double)(done > 0 ? done : 1);
    if (!opt->loop) per *= 2; /* each timed call also pays an untimed barrier and refill */
    long affordable = (long)(opt->time * 0.75 / opt->reps / (per > 0 ? per : 1e-9));
    MPI_Bcast(&affordable, 1, MPI_LONG, 0, bench_comm);
    if (affordable < iters) iters = affordable;
    if (iters < MIN_ITERS) iters = MIN_ITERS;

    /* 3. Timed repetitions. */
    double *avg = malloc(sizeof(double) * (size_t)opt->reps);
    double *mx = malloc(sizeof(double) * (size_t)opt->reps);
    double *own = malloc(sizeof(double) * (size_t)opt->reps);
    if (avg == NULL || mx == NULL || own == NULL) {
        fprintf(stderr, "coll_bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long switched = 0;
    for (int r = 0; r < opt->reps; ++r) {
        double total = 0;
        const long switches_before = switches_so_far();
        if (opt->loop) {
            MPI_Barrier(bench_comm);
            double start = MPI_Wtime();
            for (long it = 0; it < iters; ++it) {
                stamp(op, b->send, elems, nranks, (*version)++);
                run_once(op, b, elems, nranks);
            }
            total = MPI_Wtime() - start;
        } else {
            for (long it = 0; it < iters; ++it) {
                fill(op, b->send, elems, rank, nranks, (*version)++);
                MPI_Barrier(bench_comm);
                double start = MPI_Wtime();
                run_once(op, b, elems, nranks);
                total += MPI_Wtime() - start;
            }
        }
        switched += switches_so_far() - switches_before;
        /* 4. Average and maximum over ranks of the mean per call. */
        double mine = total / (double)iters * 1e6;
        own[r] = mine;
        double sum = 0, most = 0;
        MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, bench_comm);
        MPI_Reduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, 0, bench_comm);
        avg[r] = sum / nranks;
        mx[r] = most;
    }
    res.iters = iters;
    if (rank == 0) {
        res.avg_min = avg[0];
        for (int r = 1; r < opt->reps; ++r) res.avg_min = avg[r] < res.avg_min ? avg[r] : res.avg_min;
        res.avg_med = median(avg, opt->reps);
        res.max_med = median(mx, opt->reps);
    }
    double own_med = median(own, opt->reps);
    MPI_Gather(&own_med, 1, MPI_DOUBLE, ranks, 1, MPI_DOUBLE, 0, bench_comm);
    double per_iteration = (double)switched / ((double)iters * opt->reps);
    MPI_Gather(&per_iteration, 1, MPI_DOUBLE, switches, 1, MPI_DOUBLE, 0, bench_comm);
    free(avg);
    free(mx);
    free(own);
    return res;
}

/* The time an empty timed region takes (two MPI_Wtime calls): a floor
 * under every time per call of the osu mode, measured in microseconds. */
static double timer_floor(void) {
    enum { PAIRS = 100000 };
    double total = 0;
    for (int i = 0; i < PAIRS; ++i) {
        double start = MPI_Wtime();
        total += MPI_Wtime() - start;
    }
    return total / PAIRS * 1e6;
}

static void print_header(const struct options *opt, int nranks, char *places) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    char *nl = strchr(version, '\n');
    if (nl != NULL) *nl = '\0';
    printf("# coll_bench: time per collective call, microseconds\n");
    printf("# MPI library: %s\n", version);
    printf("# ranks: %d, host CPUs online: %ld\n", nranks, sysconf(_SC_NPROCESSORS_ONLN));
    for (int r = 0; r < nranks; ++r) printf("# rank %d: %s\n", r, places + r * PLACE_LEN);
    printf("# mode: %s; reps: %d; time budget per collective and size: %.2f s\n",
           opt->loop ? "loop (back-to-back calls, stamped input)"
                     : "osu (input rewritten, barrier, one timed call)",
           opt->reps, opt->time);
    printf("# communicator: %s\n", opt->dup ? "a duplicate of MPI_COMM_WORLD (--comm dup)" : "MPI_COMM_WORLD");
    if (!opt->loop) printf("# timer: an empty timed region takes %.3f us (included in every time below)\n", timer_floor());
    printf("# avg: median over reps of the mean over ranks; max: same for the slowest rank; "
           "best: lowest rep's mean over ranks\n");
    if (opt->csv) {
        printf("collective,size_bytes,iters,reps,avg_median_us,max_median_us,avg_best_us\n");
    } else {
        printf("%-22s %10s %8s %12s %12s %12s\n", "collective", "size(B)", "iters", "avg(us)",
               "max(us)", "best(us)");
    }
    fflush(stdout);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, nranks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    struct options opt;
    quiet = rank != 0;
    int parsed = parse_args(argc, argv, &opt);
    if (parsed != 0) {
        if (rank == 0) usage(parsed == 1 ? stdout : stderr, argv[0]);
        MPI_Finalize();
        return parsed == 1 ? 0 : 1;
    }

    if (opt.dup) MPI_Comm_dup(MPI_COMM_WORLD, &bench_comm);

    /* Buffers for the largest size of any collective. */
    long max_bytes = 8;
    for (int s = 0; s < opt.nsizes; ++s) {
        long b = (opt.sizes[s] + 7) / 8 * 8;
        if (b > max_bytes) max_bytes = b;
    }
    size_t big = (size_t)max_bytes * (size_t)nranks + 64;
    struct buffers b;
    b.send = malloc(big);
    b.recv = malloc(big);
    b.counts = malloc(sizeof(int) * (size_t)nranks);
    b.displs = malloc(sizeof(int) * (size_t)nranks);
    if (b.send == NULL || b.recv == NULL || b.counts == NULL || b.displs == NULL) {
        fprintf(stderr, "coll_bench: rank %d cannot allocate 2 x %zu bytes\n", rank, big);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(b.send, 0, big);
    memset(b.recv, 0, big);

    double *ranks = rank == 0 ? malloc(sizeof(double) * (size_t)nranks) : NULL;
    double *switches = rank == 0 ? malloc(sizeof(double) * (size_t)nranks) : NULL;
    if (rank == 0 && (ranks == NULL || switches == NULL)) {
        fprintf(stderr, "coll_bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    char where[PLACE_LEN];
    bench_placement(where, sizeof where);
    char *places = rank == 0 ? malloc((size_t)PLACE_LEN * (size_t)nranks) : NULL;
    MPI_Gather(where, PLACE_LEN, MPI_CHAR, places, PLACE_LEN, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) print_header(&opt, nranks, places);

    long failures = 0;
    uint64_t version = 1;
    for (int k = 0; k < opt.nops; ++k) {
        const int op = opt.ops[k];
        for (int s = 0; s < opt.nsizes; ++s) {
            const long size = op == OP_BARRIER ? 0 : opt.sizes[s];
            struct result res = measure(&opt, op, size, &b, rank, nranks, &version, ranks, switches);
            failures += res.failures;
            if (rank == 0) {
                const long shown = is_reduction(op) ? elems_of(op, size) * 8 : size;
                if (opt.csv) {
                    printf("%s,%ld,%ld,%d,%.4f,%.4f,%.4f\n", op_names[op], shown, res.iters,
                           opt.reps, res.avg_med, res.max_med, res.avg_min);
                } else {
                    printf("%-22s %10ld %8ld %12.3f %12.3f %12.3f\n", op_names[op], shown,
                           res.iters, res.avg_med, res.max_med, res.avg_min);
                }
                if (opt.per_rank) {
                    printf("#   per rank (us):");
                    for (int r = 0; r < nranks; ++r) printf(" %.3f", res.ranks[r]);
                    printf("\n#   per rank (context switches an iteration):");
                    for (int r = 0; r < nranks; ++r) printf(" %.2f", res.switches[r]);
                    printf("\n");
                }
                fflush(stdout);
            }
            if (op == OP_BARRIER) break;
        }
    }
    long all_failures = 0;
    MPI_Allreduce(&failures, &all_failures, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    free(b.send);
    free(b.recv);
    free(b.counts);
    free(b.displs);
    free(ranks);
    free(switches);
    free(places);
    if (bench_comm != MPI_COMM_WORLD) MPI_Comm_free(&bench_comm);
    MPI_Finalize();
    return all_failures > 0 ? 2 : 0;
}
