/*
 * pingpong: half round-trip latency and bandwidth between ranks 0 and 1.
 *
 * Written against the standard MPI API only, so that the same file builds with
 * shmpi's mpicc, Open MPI's and MPICH's, and the numbers compare like for like.
 *
 * What it does, for each message size:
 *   1. Rank 0 sends one message whose every byte is a known pattern; rank 1
 *      echoes it; rank 0 checks every byte (untimed).
 *   2. Warm-up: round trips until `--warmup` of them are done or a quarter of
 *      the size's time budget is spent; their mean time calibrates step 3.
 *   3. `--reps` repetitions of `iters` round trips each, where `iters` is
 *      `--iters` scaled down for large messages and for slow round trips so
 *      that the whole size takes about `--time` seconds.  Each repetition
 *      gives one half round-trip latency (elapsed / 2 / iters).
 *   4. Rank 0 reports the median and the minimum over the repetitions, and
 *      the bandwidth they imply (size / latency).
 *
 * The data changes between iterations: before each send rank 0 stamps an
 * iteration-dependent 64-bit value into the first word, one word per 4 KiB and
 * the last word of the message (a reused, untouched buffer flatters caches),
 * and every `--verify-every` iterations it checks the stamps of the echo.
 *
 * Rank 1 is a passive echo server: it returns every message it gets from
 * rank 0 until a message with the stop tag arrives.  Ranks 2 and up do nothing
 * but wait in MPI_Recv(MPI_ANY_SOURCE) for a stop message that rank 0 sends at
 * the very end: this measures what idle ranks that wait in a receive cost the
 * two busy ones (the "4 ranks on 2 cores" case).
 *
 * Output: a commented header (MPI library, ranks, host CPUs, every rank's
 * allowed CPUs and the CPU it ran on) and a table, or with --csv the same
 * header lines and CSV.
 * Exit status 0, 1 for a usage error, 2 when a check of the data failed.
 */
#define _GNU_SOURCE 1 /* sched_getaffinity, sched_getcpu */

#include <mpi.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sched.h>
#endif

#include "bench_sizes.h"
#include "bench_util.h"

enum {
    TAG_PING = 1,     /* rank 0 -> rank 1: echo this */
    TAG_PONG = 2,     /* rank 1 -> rank 0: the echo */
    TAG_STOP = 3,     /* rank 0 -> others: leave */
    TAG_PLACE = 4,    /* ranks 1 and up -> rank 0: where they run */
    MAX_SIZES = 64,
    PLACE_LEN = 256,
    MIN_ITERS = 16, /* per repetition, even when the time budget says fewer */
};

struct options {
    long sizes[MAX_SIZES];
    int nsizes;
    long iters;        /* round trips per repetition for small messages */
    long warmup;       /* warm-up round trips for small messages */
    int reps;          /* timed repetitions per size */
    double time;       /* seconds budget per size (approximate) */
    long verify_every; /* check stamps every this many iterations; 0 = never */
    int csv;
};

/* Usage errors: every rank parses the arguments, only rank 0 reports. */
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
            "  --sizes LIST     sizes in bytes: a comma list (8,64,1024) or a power-of-two\n"
            "                   range MIN:MAX (default 8:4194304); suffixes k and m allowed\n"
            "  --iters N        round trips per repetition for small messages (default 2000)\n"
            "  --warmup N       warm-up round trips for small messages (default 200)\n"
            "  --reps R         timed repetitions per size (default 7)\n"
            "  --time S         approximate seconds per size; caps iterations (default 0.5)\n"
            "  --verify-every K check the echoed stamps every K iterations (default 64)\n"
            "  --csv            print CSV instead of a table\n"
            "  --thread-multiple  start MPI with MPI_Init_thread(MPI_THREAD_MULTIPLE), still\n"
            "                   one thread: what a library's thread safety costs a call\n"
            "Ranks 0 and 1 ping-pong; ranks 2 and up wait in MPI_Recv until the end.\n",
            argv0);
}

/* Parses "8", "64k", "4m" into bytes; returns -1 when malformed. */
/* Fills opt->sizes from "a,b,c" or "min:max"; returns 0 or prints why not. */
static int parse_sizes(const char *arg, struct options *opt) {
    opt->nsizes = bench_parse_sizes("pingpong", arg, 1L << 30, opt->sizes, MAX_SIZES, quiet);
    return opt->nsizes > 0 ? 0 : -1;
}

/* Returns 0 and fills `opt`, 1 for --help, -1 for a usage error. */
static int parse_args(int argc, char **argv, struct options *opt) {
    opt->nsizes = 0;
    for (long s = 8; s <= 4L * 1024 * 1024; s *= 2) opt->sizes[opt->nsizes++] = s;
    opt->iters = 2000;
    opt->warmup = 200;
    opt->reps = 7;
    opt->time = 0.5;
    opt->verify_every = 64;
    opt->csv = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return 1;
        if (strcmp(a, "--csv") == 0) {
            opt->csv = 1;
            continue;
        }
        if (strcmp(a, "--thread-multiple") == 0) continue;  /* read before MPI_Init_thread (main) */
        if (v == NULL) {
            complain("pingpong: unknown option or missing value: '%s'\n", a);
            return -1;
        }
        ++i;
        if (strcmp(a, "--sizes") == 0) {
            if (parse_sizes(v, opt) != 0) return -1;
        } else if (strcmp(a, "--iters") == 0) {
            opt->iters = atol(v);
        } else if (strcmp(a, "--warmup") == 0) {
            opt->warmup = atol(v);
        } else if (strcmp(a, "--reps") == 0) {
            opt->reps = atoi(v);
        } else if (strcmp(a, "--time") == 0) {
            opt->time = atof(v);
        } else if (strcmp(a, "--verify-every") == 0) {
            opt->verify_every = atol(v);
        } else {
            complain("pingpong: unknown option '%s'\n", a);
            return -1;
        }
    }
    if (opt->iters < 1 || opt->warmup < 0 || opt->reps < 1 || opt->time <= 0 ||
        opt->verify_every < 0) {
        complain("pingpong: --iters, --reps and --time must be positive; --warmup and "
                        "--verify-every must not be negative\n");
        return -1;
    }
    return 0;
}

/* Byte `i` of the untimed full check of a `size`-byte message. */
static unsigned char pattern_byte(long i, long size) {
    return (unsigned char)(i * 7 + size * 13 + 1);
}

/* One round trip from rank 0. */
static void round_trip(unsigned char *sbuf, unsigned char *rbuf, long size) {
    MPI_Send(sbuf, (int)size, MPI_BYTE, 1, TAG_PING, MPI_COMM_WORLD);
    MPI_Recv(rbuf, (int)size, MPI_BYTE, 1, TAG_PONG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Rank 1: echo every message from rank 0 until the stop tag. */
static void echo_server(unsigned char *buf, long max_size) {
    char where[PLACE_LEN];
    bench_placement(where, sizeof where);
    MPI_Send(where, PLACE_LEN, MPI_CHAR, 0, TAG_PLACE, MPI_COMM_WORLD);
    for (;;) {
        MPI_Status st;
        int n = 0;
        MPI_Recv(buf, (int)max_size, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG == TAG_STOP) return;
        MPI_Get_count(&st, MPI_BYTE, &n);
        MPI_Send(buf, n, MPI_BYTE, 0, TAG_PONG, MPI_COMM_WORLD);
    }
}

/* Rank 0, steps 1-4 for one size.  Returns the number of failed checks. */
static long measure(const struct options *opt, long size, unsigned char *sbuf, unsigned char *rbuf,
                    uint64_t *msg, long *iters_out, double *lat_med, double *lat_min) {
    long failures = 0;

    /* 1. Every byte, once, untimed. */
    for (long i = 0; i < size; ++i) sbuf[i] = pattern_byte(i, size);
    for (long i = 0; i < size; ++i) rbuf[i] = 0;
    round_trip(sbuf, rbuf, size);
    for (long i = 0; i < size; ++i) {
        if (rbuf[i] != pattern_byte(i, size)) {
            fprintf(stderr, "pingpong: size %ld: byte %ld came back as %u, sent %u\n", size, i,
                    rbuf[i], pattern_byte(i, size));
            ++failures;
            break;
        }
    }

    /* Large messages get fewer iterations: about 256 MiB of traffic per rep. */
    long cap = (256L * 1024 * 1024) / (size > 0 ? size : 1);
    long iters = opt->iters < cap ? opt->iters : cap;
    if (iters < MIN_ITERS) iters = MIN_ITERS;
    long warmup = opt->warmup < cap / 4 ? opt->warmup : cap / 4;
    if (warmup < 2) warmup = 2;

    /* 2. Warm-up, bounded by a quarter of the time budget; calibrates 3. */
    double t0 = MPI_Wtime();
    long done = 0;
    while (done < warmup && MPI_Wtime() - t0 < opt->time / 4) {
        bench_stamp(sbuf, size, bench_stamp_of((*msg)++, size));
        round_trip(sbuf, rbuf, size);
        ++done;
    }
    double elapsed = MPI_Wtime() - t0;
    double per_trip = elapsed / (double)(done > 0 ? done : 1);
    long affordable = (long)(opt->time * 0.75 / opt->reps / (per_trip > 0 ? per_trip : 1e-9));
    if (affordable < iters) iters = affordable;
    if (iters < MIN_ITERS) iters = MIN_ITERS;

    /* 3. Timed repetitions. */
    double *lat = malloc(sizeof(double) * (size_t)opt->reps);
    if (lat == NULL) {
        fprintf(stderr, "pingpong: cannot allocate %d repetitions\n", opt->reps);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int r = 0; r < opt->reps; ++r) {
        double start = MPI_Wtime();
        for (long it = 0; it < iters; ++it) {
            uint64_t value = bench_stamp_of(*msg, size);
            ++*msg;
            bench_stamp(sbuf, size, value);
            round_trip(sbuf, rbuf, size);
            int check = opt->verify_every > 0 && it % opt->verify_every == 0;
            if (check && !bench_stamp_ok(rbuf, size, value)) {
                if (failures == 0) {
                    fprintf(stderr, "pingpong: size %ld, repetition %d, iteration %ld: the echo "
                                    "does not carry the stamp just sent\n", size, r, it);
                }
                ++failures;
            }
        }
        lat[r] = (MPI_Wtime() - start) / (2.0 * (double)iters);
    }

    /* 4. Median and minimum. */
    qsort(lat, (size_t)opt->reps, sizeof lat[0], cmp_double);
    *lat_min = lat[0];
    int mid = opt->reps / 2;
    *lat_med = opt->reps % 2 ? lat[mid] : (lat[mid - 1] + lat[mid]) / 2;
    *iters_out = iters;
    free(lat);
    return failures;
}

/* `places` holds every rank's placement, PLACE_LEN bytes each. */
static void print_header(const struct options *opt, int nranks, const char *places) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    char *nl = strchr(version, '\n');
    if (nl != NULL) *nl = '\0';
    int major = 0, minor = 0;
    MPI_Get_version(&major, &minor);
    printf("# pingpong: half round-trip latency between ranks 0 and 1\n");
    printf("# MPI library: %s\n", version);
    printf("# MPI standard: %d.%d\n", major, minor);
    int level = -1;
    MPI_Query_thread(&level);
    printf("# thread level provided: %s\n", level == MPI_THREAD_MULTIPLE     ? "MPI_THREAD_MULTIPLE"
                                           : level == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
                                           : level == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
                                                                            : "MPI_THREAD_SINGLE");
    printf("# ranks: %d (%d idle, waiting in MPI_Recv from MPI_ANY_SOURCE)\n", nranks,
           nranks > 2 ? nranks - 2 : 0);
    printf("# host CPUs online: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
    for (int r = 0; r < nranks; ++r) printf("# rank %d: %s\n", r, places + (size_t)r * PLACE_LEN);
    printf("# reps per size: %d, time budget per size: %.2f s, "
           "stamps checked every %ld iterations\n",
           opt->reps, opt->time, opt->verify_every);
    if (opt->csv) {
        printf("size_bytes,iters,reps,lat_median_us,lat_min_us,bw_median_MBps,bw_max_MBps\n");
    } else {
        printf("%10s %8s %14s %14s %14s %14s\n", "size(B)", "iters", "lat_med(us)", "lat_min(us)",
               "bw_med(MB/s)", "bw_max(MB/s)");
    }
    fflush(stdout);
}

int main(int argc, char **argv) {
    int required = MPI_THREAD_SINGLE, provided = -1;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--thread-multiple") == 0) required = MPI_THREAD_MULTIPLE;
    }
    MPI_Init_thread(&argc, &argv, required, &provided);
    int rank = 0, nranks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    /* Every rank parses the arguments; only rank 0 complains. */
    struct options opt;
    quiet = rank != 0;
    int parsed = parse_args(argc, argv, &opt);
    if (parsed != 0 || nranks < 2) {
        if (rank == 0) {
            if (parsed >= 0 && nranks < 2) {
                fprintf(stderr, "pingpong: needs at least 2 ranks, got %d\n", nranks);
            }
            usage(parsed == 1 ? stdout : stderr, argv[0]);
        }
        MPI_Finalize();
        return parsed == 1 ? 0 : 1;
    }

    /* Ranks 2 and up: wait for the end. */
    if (rank >= 2) {
        char where[PLACE_LEN];
        bench_placement(where, sizeof where);
        MPI_Send(where, PLACE_LEN, MPI_CHAR, 0, TAG_PLACE, MPI_COMM_WORLD);
        int stop = 0;
        MPI_Recv(&stop, 1, MPI_INT, MPI_ANY_SOURCE, TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Finalize();
        return 0;
    }

    long max_size = 8;
    for (int i = 0; i < opt.nsizes; ++i) {
        if (opt.sizes[i] > max_size) max_size = opt.sizes[i];
    }
    unsigned char *sbuf = malloc((size_t)max_size);
    unsigned char *rbuf = malloc((size_t)max_size);
    if (sbuf == NULL || rbuf == NULL) {
        fprintf(stderr, "pingpong: rank %d: cannot allocate 2 x %ld bytes\n", rank, max_size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sbuf, 0, (size_t)max_size);
    memset(rbuf, 0, (size_t)max_size);

    if (rank == 1) {
        echo_server(sbuf, max_size);
        free(sbuf);
        free(rbuf);
        MPI_Finalize();
        return 0;
    }

    char *places = calloc((size_t)nranks, PLACE_LEN);
    if (places == NULL) {
        fprintf(stderr, "pingpong: cannot allocate the placement of %d ranks\n", nranks);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    bench_placement(places, PLACE_LEN);
    for (int r = 1; r < nranks; ++r) {
        char *p = places + (size_t)r * PLACE_LEN;
        MPI_Recv(p, PLACE_LEN, MPI_CHAR, r, TAG_PLACE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        p[PLACE_LEN - 1] = '\0';
    }
    print_header(&opt, nranks, places);
    free(places);

    long failures = 0;
    uint64_t msg = 0;
    for (int i = 0; i < opt.nsizes; ++i) {
        long size = opt.sizes[i], iters = 0;
        double med = 0, min = 0;
        failures += measure(&opt, size, sbuf, rbuf, &msg, &iters, &med, &min);
        double bw_med = med > 0 ? (double)size / med / 1e6 : 0;
        double bw_max = min > 0 ? (double)size / min / 1e6 : 0;
        if (opt.csv) {
            printf("%ld,%ld,%d,%.3f,%.3f,%.2f,%.2f\n", size, iters, opt.reps, med * 1e6, min * 1e6,
                   bw_med, bw_max);
        } else {
            printf("%10ld %8ld %14.3f %14.3f %14.2f %14.2f\n", size, iters, med * 1e6, min * 1e6,
                   bw_med, bw_max);
        }
        fflush(stdout);
    }
    if (failures > 0) printf("# DATA CHECK FAILED: %ld mismatches\n", failures);

    /* Rank 1 receives bytes, the idle ranks an int. */
    int stop = 1;
    MPI_Send(sbuf, 0, MPI_BYTE, 1, TAG_STOP, MPI_COMM_WORLD);
    for (int r = 2; r < nranks; ++r) MPI_Send(&stop, 1, MPI_INT, r, TAG_STOP, MPI_COMM_WORLD);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return failures > 0 ? 2 : 0;
}
