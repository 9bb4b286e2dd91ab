/*
 * rma_bench: one-sided communication (MPI-3.1 chapter 11) between ranks 0
 * and 1: rank 0 is the origin, rank 1 the target.
 *
 * Written against the standard MPI API only, so that the same file builds with
 * shmpi's mpicc, Open MPI's and MPICH's, and the numbers compare like for like
 * (bench/rma_compare.sh runs it with all three).
 *
 * Windows (--windows, default both): `allocate`, memory from
 * MPI_Win_allocate; `create`, the program's own memory (malloc) given to
 * MPI_Win_create.  Each window has twice the largest size's bytes on both
 * ranks, displacement unit 1; operations go to displacement 0, except that
 * fence epochs alternate between the two halves (rank 1 reads the one put
 * in the epoch just ended while rank 0 may put into the other).
 *
 * Operations (--ops, default all), each a row per size except the two
 * atomics, which move 8 bytes:
 *   put       MPI_Put of `size` bytes (MPI_BYTE) + MPI_Win_flush
 *   get       MPI_Get + MPI_Win_flush
 *   acc       MPI_Accumulate of size/8 MPI_DOUBLEs with MPI_SUM + MPI_Win_flush
 *   fetch_op  MPI_Fetch_and_op of one uint64_t (MPI_SUM) + MPI_Win_flush
 *   cas       MPI_Compare_and_swap of one uint64_t + MPI_Win_flush
 *   fence     one epoch: rank 0 puts `size` bytes, both ranks MPI_Win_fence
 *   pscw      one epoch: rank 1 MPI_Win_post + MPI_Win_wait, rank 0
 *             MPI_Win_start + MPI_Put + MPI_Win_complete
 * The first five run inside one MPI_Win_lock_all epoch of rank 0 (opened
 * before the size's warm-up, closed after its last repetition) while rank 1
 * waits in MPI_Barrier, where any MPI makes progress for a target that
 * needs it; their times are rank 0's per operation.  The epochs' times are
 * rank 0's per epoch.
 *
 * What it does, for each window, operation and size:
 *   1. Rank 1 fills its part of the window (under an exclusive lock of its
 *      own part) with what the operation needs: the complement of rank 0's
 *      pattern for put and the epochs, a pattern of its own for get, zeros
 *      for the others.
 *   2. Warm-up: operations until `--warmup` of them are done or a quarter of
 *      the size's time budget is spent (the epochs: `--warmup` epochs, both
 *      ranks must agree on the count); their mean time calibrates step 3.
 *   3. `--reps` repetitions of `iters` operations each, where `iters` is
 *      `--iters` scaled down for large sizes and for slow operations so that
 *      the whole row takes about `--time` seconds.
 *   4. Rank 0 reports the median and the minimum over the repetitions, and
 *      the bandwidth the median implies (size / time).
 *
 * The data changes between operations: rank 0 stamps an operation-dependent
 * 64-bit value into the first word, one word per 4 KiB and the last word of
 * what it puts (a reused, untouched buffer flatters caches); a get first
 * spoils those words of its destination; an accumulate adds a
 * count-dependent value there and 1.0 everywhere else; fetch_op adds a
 * varying amount and cas swaps in the next stamp.  Checks: every
 * `--verify-every` operations the get's stamped words, every fetch_op and
 * cas result, every `--verify-every` epochs the stamped words at the target;
 * and in full, every byte: the first and the last get, the target's part
 * after the first epoch, and its whole part after the last put,
 * accumulate and epoch (the sums of every accumulate there was), and the
 * atomics' final word.
 *
 * Output: a commented header (MPI library, host CPUs, both ranks' allowed
 * CPUs and the CPU they ran on) and a table, or with --csv the same header
 * lines and CSV.
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
    TAG_INFO = 11,    /* rank 0 -> rank 1: what the target must now hold */
    TAG_VERDICT = 12, /* rank 1 -> rank 0: how many of its checks failed */
    TAG_PLACE = 13,   /* rank 1 -> rank 0: where it runs */
    MAX_SIZES = 64,
    PLACE_LEN = 256,
    MIN_ITERS = 16, /* per repetition, even when the time budget says fewer */
};

enum op { OP_PUT, OP_GET, OP_ACC, OP_FETCH_OP, OP_CAS, OP_FENCE, OP_PSCW, NUM_OPS };
static const char *const op_names[NUM_OPS] = {"put", "get", "acc", "fetch_op", "cas", "fence", "pscw"};

enum flavor { WIN_ALLOCATE, WIN_CREATE, NUM_FLAVORS };
static const char *const flavor_names[NUM_FLAVORS] = {"allocate", "create"};

struct options {
    long sizes[MAX_SIZES];
    int nsizes;
    int ops[NUM_OPS];
    int nops;
    int flavors[NUM_FLAVORS];
    int nflavors;
    long iters;        /* operations per repetition for small sizes */
    long warmup;       /* warm-up operations for small sizes */
    int reps;          /* timed repetitions per row */
    double time;       /* seconds budget per row (approximate) */
    long verify_every; /* check stamps every this many operations; 0 = only the full checks */
    int csv;
};

/* What rank 0 tells rank 1 at the end of a row: what its part must hold. */
struct info {
    uint64_t ops;       /* operations or epochs, untimed ones included */
    uint64_t last;      /* the last stamp put; fetch_op and cas: the final word */
    double stamp_sum;   /* acc: the sum of what was added at the stamped words */
    uint64_t disp;      /* where the last put went (fence: one of two halves) */
};

/* One window and what the rows need around it. */
struct bench {
    MPI_Win win;
    unsigned char *part; /* this rank's part of the window: two halves */
    long half;           /* bytes in one half: the largest size */
    MPI_Group peer;      /* the other rank, for post/start */
    int rank;
    unsigned char *obuf; /* rank 0's origin / result buffer */
    unsigned char *expect; /* rank 1's expected contents */
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
            "usage: %s [options]   (exactly 2 ranks: 0 the origin, 1 the target)\n"
            "  --windows LIST   allocate (MPI_Win_allocate), create (MPI_Win_create over\n"
            "                   malloc'd memory) or both (default allocate,create)\n"
            "  --ops LIST       put,get,acc,fetch_op,cas,fence,pscw (default all); the\n"
            "                   atomics fetch_op and cas run once, at 8 bytes\n"
            "  --sizes LIST     sizes in bytes: a comma list (8,64,1024) or a power-of-two\n"
            "                   range MIN:MAX (default 8,64,512,4k,32k,256k,1m); suffixes\n"
            "                   k and m allowed; acc uses size/8 doubles (sizes below 8: none)\n"
            "  --iters N        operations per repetition for small sizes (default 1000)\n"
            "  --warmup N       warm-up operations for small sizes (default 100)\n"
            "  --reps R         timed repetitions per row (default 7)\n"
            "  --time S         approximate seconds per row; caps iterations (default 0.25)\n"
            "  --verify-every K check stamps every K operations (default 64; 0: only the\n"
            "                   full checks at the start and end of each row)\n"
            "  --csv            print CSV instead of a table\n",
            argv0);
}

/* Returns 0 and fills `opt`, 1 for --help, -1 for a usage error. */
static int parse_args(int argc, char **argv, struct options *opt) {
    static const long default_sizes[] = {8, 64, 512, 4096, 32768, 262144, 1048576};
    opt->nsizes = 0;
    for (size_t i = 0; i < sizeof default_sizes / sizeof default_sizes[0]; ++i) {
        opt->sizes[opt->nsizes++] = default_sizes[i];
    }
    opt->nops = NUM_OPS;
    for (int k = 0; k < NUM_OPS; ++k) opt->ops[k] = k;
    opt->nflavors = NUM_FLAVORS;
    for (int k = 0; k < NUM_FLAVORS; ++k) opt->flavors[k] = k;
    opt->iters = 1000;
    opt->warmup = 100;
    opt->reps = 7;
    opt->time = 0.25;
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
        if (v == NULL) {
            complain("rma_bench: unknown option or missing value: '%s'\n", a);
            return -1;
        }
        ++i;
        if (strcmp(a, "--sizes") == 0) {
            opt->nsizes = bench_parse_sizes("rma_bench", v, 1L << 30, opt->sizes, MAX_SIZES, quiet);
            if (opt->nsizes <= 0) return -1;
        } else if (strcmp(a, "--ops") == 0) {
            opt->nops = bench_parse_names("rma_bench", "--ops", v, op_names, NUM_OPS, opt->ops, quiet);
            if (opt->nops < 0) return -1;
        } else if (strcmp(a, "--windows") == 0) {
            opt->nflavors = bench_parse_names("rma_bench", "--windows", v, flavor_names, NUM_FLAVORS, opt->flavors, quiet);
            if (opt->nflavors < 0) return -1;
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
            complain("rma_bench: unknown option '%s'\n", a);
            return -1;
        }
    }
    if (opt->iters < 1 || opt->warmup < 0 || opt->reps < 1 || opt->time <= 0 ||
        opt->verify_every < 0) {
        complain("rma_bench: --iters, --reps and --time must be positive; --warmup and "
                 "--verify-every must not be negative\n");
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- data */

/* True when every stamped position of `buf` holds what `want` holds there. */
static int stamps_match(const unsigned char *buf, const unsigned char *want, long size) {
    if (size < 8) return memcmp(buf, want, (size_t)size) == 0;
    for (long off = 0; off + 8 <= size; off += BENCH_STAMP_STRIDE) {
        if (memcmp(buf + off, want + off, 8) != 0) return 0;
    }
    return memcmp(buf + size - 8, want + size - 8, 8) == 0;
}

/* Rank 0's pattern (put, epochs) and rank 1's own (get). */
static unsigned char origin_byte(long i, long size) { return (unsigned char)(i * 7 + size * 13 + 1); }
static unsigned char target_byte(long i, long size) { return (unsigned char)(i * 11 + size * 5 + 3); }

/* The value accumulate number `k` adds at the stamped doubles (exact sums). */
static double acc_value(uint64_t k) { return (double)(k % 1021) + 2.0; }

/* Doubles `d` of an accumulate of `n` doubles: is it a stamped one? */
static int acc_stamped(long d, long n) { return d == n - 1 || (d * 8) % BENCH_STAMP_STRIDE == 0; }

static void acc_stamp(double *buf, long n, double value) {
    for (long d = 0; d < n; d += BENCH_STAMP_STRIDE / 8) buf[d] = value;
    buf[n - 1] = value;
}

/* The first byte where `got` and `want` differ, or -1. */
static long first_diff(const unsigned char *got, const unsigned char *want, long size) {
    if (memcmp(got, want, (size_t)size) == 0) return -1;
    for (long i = 0; i < size; ++i) {
        if (got[i] != want[i]) return i;
    }
    return -1;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ------------------------------------------------------------ rank 1 */

/* Step 1: rank 1 fills its part for `op` at `size`, under its own lock. */
static void target_fill(struct bench *b, enum op op, long size) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, b->win);
    for (long i = 0; i < size; ++i) {
        switch (op) {
            case OP_PUT:
            case OP_FENCE:
            case OP_PSCW: b->part[i] = (unsigned char)~origin_byte(i, size); break;
            case OP_GET: b->part[i] = target_byte(i, size); break;
            default: b->part[i] = 0; break;
        }
    }
    if (op == OP_FENCE) memcpy(b->part + b->half, b->part, (size_t)size);
    if (op == OP_FETCH_OP || op == OP_CAS) memset(b->part, 0, 8);
    MPI_Win_unlock(1, b->win);
}

/* What rank 0's origin buffer held at its last put of `size` bytes. */
static void expected_put(unsigned char *want, long size, const struct info *in) {
    for (long i = 0; i < size; ++i) want[i] = origin_byte(i, size);
    if (in->ops > 1) bench_stamp(want, size, in->last);
}

/* The end of a passive row: rank 1 checks its whole part against what rank
 * 0 says it did.  Returns the number of failed checks. */
static long target_check(struct bench *b, enum op op, long size, const struct info *in, const char *fl) {
    long bad = -1;
    char what[160] = "";
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, b->win);
    switch (op) {
        case OP_PUT:
        case OP_FENCE:
        case OP_PSCW:
            expected_put(b->expect, size, in);
            bad = first_diff(b->part + in->disp, b->expect, size);
            if (bad >= 0) {
                snprintf(what, sizeof what, "byte %ld is %u, the last %s wrote %u", bad, b->part[in->disp + bad],
                         op_names[op], b->expect[bad]);
            }
            break;
        case OP_ACC: {
            long n = size / 8;
            for (long d = 0; d < n && bad < 0; ++d) {
                double v;
                memcpy(&v, b->part + d * 8, 8);
                double want = acc_stamped(d, n) ? in->stamp_sum : (double)in->ops;
                if (v != want) {
                    bad = d * 8;
                    snprintf(what, sizeof what, "double %ld is %.17g, the sum of %llu accumulates is %.17g", d,
                             v, (unsigned long long)in->ops, want);
                }
            }
            break;
        }
        case OP_FETCH_OP:
        case OP_CAS: {
            uint64_t v;
            memcpy(&v, b->part, 8);
            if (v != in->last) {
                bad = 0;
                snprintf(what, sizeof what, "the word is %#llx after %llu operations, expected %#llx",
                         (unsigned long long)v, (unsigned long long)in->ops, (unsigned long long)in->last);
            }
            break;
        }
        default: break;
    }
    MPI_Win_unlock(1, b->win);
    if (bad < 0) return 0;
    fprintf(stderr, "rma_bench: %s window, %s, %ld B: at the target after the row, %s\n", fl, op_names[op], size,
            what);
    return 1;
}

/* ------------------------------------------------------------ rank 0 */

/* One passive-target operation number `k` of `size` bytes and its flush.
 * `running` is what the fetch_op/cas word holds; returns 1 when a checked
 * result is wrong. */
static int one_op(struct bench *b, enum op op, long size, uint64_t k, uint64_t *running, double *stamp_sum,
                  int check) {
    switch (op) {
        case OP_PUT:
            if (k > 0) bench_stamp(b->obuf, size, bench_stamp_of(k, size));
            MPI_Put(b->obuf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, b->win);
            MPI_Win_flush(1, b->win);
            return 0;
        case OP_GET:
            bench_stamp(b->obuf, size, bench_stamp_of(k, size));
            MPI_Get(b->obuf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, b->win);
            MPI_Win_flush(1, b->win);
            return check && !stamps_match(b->obuf, b->expect, size);
        case OP_ACC: {
            long n = size / 8;
            double v = acc_value(k);
            acc_stamp((double *)b->obuf, n, v);
            MPI_Accumulate(b->obuf, (int)n, MPI_DOUBLE, 1, 0, (int)n, MPI_DOUBLE, MPI_SUM, b->win);
            MPI_Win_flush(1, b->win);
            *stamp_sum += v;
            return 0;
        }
        case OP_FETCH_OP: {
            uint64_t add = k % 1000 + 1, old = ~(uint64_t)0;
            MPI_Fetch_and_op(&add, &old, MPI_UINT64_T, 1, 0, MPI_SUM, b->win);
            MPI_Win_flush(1, b->win);
            int wrong = old != *running;
            *running += add;
            return wrong;
        }
        case OP_CAS: {
            uint64_t next = bench_stamp_of(k, 8), old = ~*running;
            MPI_Compare_and_swap(&next, running, &old, MPI_UINT64_T, 1, 0, b->win);
            MPI_Win_flush(1, b->win);
            int wrong = old != *running;
            *running = next;
            return wrong;
        }
        default: return 0;
    }
}

/* Where epoch `k` puts: fence epochs alternate between the window's two
 * halves, because rank 1 reads what epoch k put after its fence while rank
 * 0 may already be putting epoch k + 1's data (pscw: rank 1 reads before
 * its next MPI_Win_post, so no epoch overlaps its reading). */
static long epoch_disp(const struct bench *b, enum op op, uint64_t k) {
    return op == OP_FENCE && (k & 1) ? b->half : 0;
}

/* One epoch number `k` of the active-target rows, on either rank.  Rank 1
 * checks the data when `check` (epoch 0: every byte; later: the stamps);
 * returns 1 when it is wrong. */
static int one_epoch(struct bench *b, enum op op, long size, uint64_t k, int check) {
    long disp = epoch_disp(b, op, k);
    if (b->rank == 0) {
        if (op == OP_PSCW) MPI_Win_start(b->peer, 0, b->win);
        if (k > 0) bench_stamp(b->obuf, size, bench_stamp_of(k, size));
        MPI_Put(b->obuf, (int)size, MPI_BYTE, 1, disp, (int)size, MPI_BYTE, b->win);
        if (op == OP_PSCW) {
            MPI_Win_complete(b->win);
        } else {
            MPI_Win_fence(0, b->win);
        }
        return 0;
    }
    if (op == OP_PSCW) {
        MPI_Win_post(b->peer, 0, b->win);
        MPI_Win_wait(b->win);
    } else {
        MPI_Win_fence(0, b->win);
    }
    if (!check) return 0;
    if (k == 0) {
        for (long i = 0; i < size; ++i) b->expect[i] = origin_byte(i, size);
        return first_diff(b->part + disp, b->expect, size) >= 0;
    }
    bench_stamp(b->expect, size, bench_stamp_of(k, size));
    return !stamps_match(b->part + disp, b->expect, size);
}

struct row {
    long iters;
    double med, min; /* seconds per operation or epoch */
    long failures;
};

/* Median and minimum of `t[0..reps)`, sorted in place. */
static void summarize(double *t, int reps, struct row *r) {
    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
    r->min = t[0];
    int mid = reps / 2;
    r->med = reps % 2 ? t[mid] : (t[mid - 1] + t[mid]) / 2;
}

/* The iterations of one repetition, from `per_op` seconds measured in the
 * warm-up, within [MIN_ITERS, --iters] and the 256 MiB cap. */
static long iterations(const struct options *opt, long size, double per_op) {
    long cap = (256L * 1024 * 1024) / (size > 0 ? size : 1);
    long iters = opt->iters < cap ? opt->iters : cap;
    long affordable = (long)(opt->time * 0.75 / opt->reps / (per_op > 0 ? per_op : 1e-9));
    if (affordable < iters) iters = affordable;
    return iters < MIN_ITERS ? MIN_ITERS : iters;
}

static long warmups(const struct options *opt, long size) {
    long cap = (256L * 1024 * 1024) / (size > 0 ? size : 1) / 4;
    long w = opt->warmup < cap ? opt->warmup : cap;
    return w < 2 ? 2 : w;
}

/* Says what went wrong at rank 0's first failed check of a row. */
static void passive_wrong(const char *fl, enum op op, long size, const char *when, long it) {
    fprintf(stderr, "rma_bench: %s window, %s, %ld B, %s, operation %ld: the %s\n", fl, op_names[op], size, when,
            it, op == OP_GET ? "data got is not the target's" : "fetched value is not the one before");
}

/* A passive-target row, both ranks.  Rank 0 fills `r`. */
static void passive_row(const struct options *opt, struct bench *b, enum op op, long size, const char *fl,
                        double *t, struct row *r) {
    if (b->rank == 1) target_fill(b, op, size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (b->rank == 1) {
        MPI_Barrier(MPI_COMM_WORLD); /* rank 0 works meanwhile */
        struct info in;
        MPI_Recv(&in, sizeof in, MPI_BYTE, 0, TAG_INFO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        long bad = target_check(b, op, size, &in, fl);
        MPI_Send(&bad, 1, MPI_LONG, 0, TAG_VERDICT, MPI_COMM_WORLD);
        return;
    }

    long failures = 0;
    uint64_t k = 0, running = 0;
    double stamp_sum = 0;
    /* The origin's buffer: the pattern, or for get what should arrive. */
    for (long i = 0; i < size; ++i) {
        b->obuf[i] = origin_byte(i, size);
        b->expect[i] = target_byte(i, size);
    }
    if (op == OP_ACC) {
        for (long d = 0; d < size / 8; ++d) ((double *)b->obuf)[d] = 1.0;
    }
    MPI_Win_lock_all(0, b->win);

    /* The first operation, checked in full where rank 0 can. */
    if (one_op(b, op, size, k++, &running, &stamp_sum, 1)) {
        passive_wrong(fl, op, size, "the first", 0);
        ++failures;
    }
    if (op == OP_GET) {
        long bad = first_diff(b->obuf, b->expect, size);
        if (bad >= 0) {
            fprintf(stderr, "rma_bench: %s window, get, %ld B: byte %ld of the first get is %u, the target "
                            "holds %u\n", fl, size, bad, b->obuf[bad], b->expect[bad]);
            ++failures;
        }
    }

    /* Warm-up, bounded by a quarter of the time budget. */
    long warmup = warmups(opt, size), done = 0;
    double t0 = MPI_Wtime();
    while (done < warmup && MPI_Wtime() - t0 < opt->time / 4) {
        int wrong = one_op(b, op, size, k++, &running, &stamp_sum, 1);
        if (wrong && failures == 0) passive_wrong(fl, op, size, "warm-up", done);
        failures += wrong;
        ++done;
    }
    double elapsed = MPI_Wtime() - t0;
    r->iters = iterations(opt, size, elapsed / (double)(done > 0 ? done : 1));

    for (int rep = 0; rep < opt->reps; ++rep) {
        double start = MPI_Wtime();
        for (long it = 0; it < r->iters; ++it) {
            int check = op == OP_FETCH_OP || op == OP_CAS ||
                        (opt->verify_every > 0 && it % opt->verify_every == 0);
            int wrong = one_op(b, op, size, k++, &running, &stamp_sum, check);
            if (wrong && failures == 0) {
                char when[32];
                snprintf(when, sizeof when, "repetition %d", rep);
                passive_wrong(fl, op, size, when, it);
            }
            failures += wrong;
        }
        t[rep] = (MPI_Wtime() - start) / (double)r->iters;
    }

    /* The last get, in full. */
    if (op == OP_GET) {
        long bad = first_diff(b->obuf, b->expect, size);
        if (bad >= 0) {
            fprintf(stderr, "rma_bench: %s window, get, %ld B: byte %ld of the last get is %u, the target "
                            "holds %u\n", fl, size, bad, b->obuf[bad], b->expect[bad]);
            ++failures;
        }
    }
    MPI_Win_unlock_all(b->win);
    MPI_Barrier(MPI_COMM_WORLD);

    struct info in = {k, op == OP_PUT ? bench_stamp_of(k - 1, size) : running, stamp_sum, 0};
    MPI_Send(&in, sizeof in, MPI_BYTE, 1, TAG_INFO, MPI_COMM_WORLD);
    long bad = 0;
    MPI_Recv(&bad, 1, MPI_LONG, 1, TAG_VERDICT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    summarize(t, opt->reps, r);
    r->failures = failures + bad;
}

/* An active-target row (fence or pscw), both ranks.  Rank 0 fills `r`. */
static void active_row(const struct options *opt, struct bench *b, enum op op, long size, const char *fl,
                       double *t, struct row *r) {
    if (b->rank == 1) target_fill(b, op, size);
    if (b->rank == 0) {
        for (long i = 0; i < size; ++i) b->obuf[i] = origin_byte(i, size);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long failures = 0;
    uint64_t k = 0;
    if (op == OP_FENCE) MPI_Win_fence(0, b->win);

    /* The first epoch checked in full by rank 1, then a warm-up of a number
     * of epochs both know, which calibrates the repetitions. */
    if (one_epoch(b, op, size, k++, 1)) {
        fprintf(stderr, "rma_bench: %s window, %s, %ld B: after the first epoch the target's part does not hold "
                        "every byte put\n", fl, op_names[op], size);
        ++failures;
    }
    long warmup = warmups(opt, size);
    double t0 = MPI_Wtime();
    for (long w = 0; w < warmup; ++w) {
        int wrong = one_epoch(b, op, size, k, opt->verify_every > 0 && k % (uint64_t)opt->verify_every == 0);
        if (wrong && failures == 0) {
            fprintf(stderr, "rma_bench: %s window, %s, %ld B, warm-up epoch %ld: the target's part does not "
                            "hold the stamp just put\n", fl, op_names[op], size, w);
        }
        failures += wrong;
        ++k;
    }
    long iters = iterations(opt, size, (MPI_Wtime() - t0) / (double)warmup);
    MPI_Bcast(&iters, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    r->iters = iters;

    for (int rep = 0; rep < opt->reps; ++rep) {
        double start = MPI_Wtime();
        for (long it = 0; it < iters; ++it) {
            int check = opt->verify_every > 0 && it % opt->verify_every == 0;
            int wrong = one_epoch(b, op, size, k++, check);
            if (wrong && failures == 0) {
                fprintf(stderr, "rma_bench: %s window, %s, %ld B, repetition %d, epoch %ld: the target's part "
                                "does not hold the stamp just put\n", fl, op_names[op], size, rep, it);
            }
            failures += wrong;
        }
        t[rep] = (MPI_Wtime() - start) / (double)iters;
    }
    if (op == OP_FENCE) MPI_Win_fence(MPI_MODE_NOSUCCEED, b->win);

    /* Rank 1's full check of the last epoch, and both ranks' verdicts. */
    struct info in = {k, bench_stamp_of(k - 1, size), 0, (uint64_t)epoch_disp(b, op, k - 1)};
    if (b->rank == 1) failures += target_check(b, op, size, &in, fl);
    long all = 0;
    MPI_Reduce(&failures, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (b->rank == 0) {
        summarize(t, opt->reps, r);
        r->failures = all;
    }
}

/* ---------------------------------------------------------------- main */

static void print_header(const struct options *opt, const char *places) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    char *nl = strchr(version, '\n');
    if (nl != NULL) *nl = '\0';
    int major = 0, minor = 0;
    MPI_Get_version(&major, &minor);
    printf("# rma_bench: one-sided operations, rank 0 the origin, rank 1 the target\n");
    printf("# MPI library: %s\n", version);
    printf("# MPI standard: %d.%d\n", major, minor);
    printf("# host CPUs online: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
    for (int r = 0; r < 2; ++r) printf("# rank %d: %s\n", r, places + (size_t)r * PLACE_LEN);
    printf("# reps per row: %d, time budget per row: %.2f s, stamps checked every %ld operations\n", opt->reps,
           opt->time, opt->verify_every);
    printf("# put/get/acc/fetch_op/cas: us per operation and its MPI_Win_flush in one MPI_Win_lock_all "
           "epoch; fence/pscw: us per epoch of one MPI_Put\n");
    if (opt->csv) {
        printf("window,op,size_bytes,iters,reps,us_median,us_min,MBps_median\n");
    } else {
        printf("%-9s %-9s %10s %8s %12s %12s %12s\n", "window", "op", "size(B)", "iters", "us_med", "us_min",
               "MB/s_med");
    }
    fflush(stdout);
}

/* Makes window `fl` of two halves of `half` bytes each, on both ranks. */
static void make_window(struct bench *b, enum flavor fl, long half) {
    long bytes = 2 * half;
    b->half = half;
    if (fl == WIN_ALLOCATE) {
        MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &b->part, &b->win);
    } else {
        b->part = malloc((size_t)bytes);
        if (b->part == NULL) {
            fprintf(stderr, "rma_bench: rank %d: cannot allocate %ld bytes\n", b->rank, bytes);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        memset(b->part, 0, (size_t)bytes);
        MPI_Win_create(b->part, (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &b->win);
    }
}

static void free_window(struct bench *b, enum flavor fl) {
    MPI_Win_free(&b->win);
    if (fl == WIN_CREATE) free(b->part);
    b->part = NULL;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, nranks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    struct options opt;
    quiet = rank != 0;
    int parsed = parse_args(argc, argv, &opt);
    if (parsed != 0 || nranks != 2) {
        if (rank == 0) {
            if (parsed >= 0 && nranks != 2) fprintf(stderr, "rma_bench: needs exactly 2 ranks, got %d\n", nranks);
            usage(parsed == 1 ? stdout : stderr, argv[0]);
        }
        MPI_Finalize();
        return parsed == 1 ? 0 : 1;
    }

    long max_size = 8;
    for (int i = 0; i < opt.nsizes; ++i) {
        if (opt.sizes[i] > max_size) max_size = opt.sizes[i];
    }
    max_size = (max_size + 7) / 8 * 8;
    struct bench b;
    memset(&b, 0, sizeof b);
    b.rank = rank;
    b.obuf = malloc((size_t)max_size);
    b.expect = malloc((size_t)max_size);
    double *t = malloc(sizeof(double) * (size_t)opt.reps);
    if (b.obuf == NULL || b.expect == NULL || t == NULL) {
        fprintf(stderr, "rma_bench: rank %d: cannot allocate 2 x %ld bytes\n", rank, max_size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(b.obuf, 0, (size_t)max_size);
    memset(b.expect, 0, (size_t)max_size);
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int peer = 1 - rank;
    MPI_Group_incl(world, 1, &peer, &b.peer);
    MPI_Group_free(&world);

    char places[2 * PLACE_LEN];
    bench_placement(places + (size_t)rank * PLACE_LEN, PLACE_LEN);
    if (rank == 1) {
        MPI_Send(places + PLACE_LEN, PLACE_LEN, MPI_CHAR, 0, TAG_PLACE, MPI_COMM_WORLD);
    } else {
        MPI_Recv(places + PLACE_LEN, PLACE_LEN, MPI_CHAR, 1, TAG_PLACE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        places[2 * PLACE_LEN - 1] = '\0';
        print_header(&opt, places);
    }

    long failures = 0;
    for (int f = 0; f < opt.nflavors; ++f) {
        enum flavor fl = (enum flavor)opt.flavors[f];
        make_window(&b, fl, max_size);
        for (int o = 0; o < opt.nops; ++o) {
            enum op op = (enum op)opt.ops[o];
            int atomic = op == OP_FETCH_OP || op == OP_CAS;
            for (int s = 0; s < (atomic ? 1 : opt.nsizes); ++s) {
                long size = atomic ? 8 : opt.sizes[s];
                if (op == OP_ACC && size < 8) continue;
                struct row r = {0, 0, 0, 0};
                if (op == OP_FENCE || op == OP_PSCW) {
                    active_row(&opt, &b, op, size, flavor_names[fl], t, &r);
                } else {
                    passive_row(&opt, &b, op, size, flavor_names[fl], t, &r);
                }
                if (rank != 0) continue;
                failures += r.failures;
                double bw = r.med > 0 ? (double)size / r.med / 1e6 : 0;
                if (opt.csv) {
                    printf("%s,%s,%ld,%ld,%d,%.3f,%.3f,%.2f\n", flavor_names[fl], op_names[op], size, r.iters,
                           opt.reps, r.med * 1e6, r.min * 1e6, bw);
                } else {
                    printf("%-9s %-9s %10ld %8ld %12.3f %12.3f %12.2f%s\n", flavor_names[fl], op_names[op], size,
                           r.iters, r.med * 1e6, r.min * 1e6, bw, r.failures > 0 ? "  CHECK FAILED" : "");
                }
                fflush(stdout);
            }
        }
        free_window(&b, fl);
    }
    if (rank == 0 && failures > 0) printf("# DATA CHECK FAILED: %ld mismatches\n", failures);
    MPI_Bcast(&failures, 1, MPI_LONG, 0, MPI_COMM_WORLD);

    MPI_Group_free(&b.peer);
    free(b.obuf);
    free(b.expect);
    free(t);
    MPI_Finalize();
    return failures > 0 ? 2 : 0;
}
