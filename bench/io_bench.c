/*
 * io_bench: parallel I/O (MPI-3.1 chapter 13), every rank of
 * MPI_COMM_WORLD writing and reading its own part of one shared file.
 *
 * Written against the standard MPI API only, so that the same file builds with
 * shmpi's mpicc, Open MPI's and MPICH's, and the numbers compare like for like
 * (bench/io_compare.sh runs it with all three).
 *
 * The file: `--dir`/io_bench.PID (default directory $TMPDIR, else /tmp;
 * PID is rank 0's), opened once by all ranks with MPI_MODE_CREATE |
 * MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE and no hints (MPI_INFO_NULL), so
 * each MPI runs with its own defaults; it goes when the program closes it.
 * The header names the directory's file system: the page cache makes most
 * of what is timed here, and tmpfs or a disk changes the numbers.
 *
 * Patterns (--patterns, default all), each a row per size (--sizes: bytes
 * per rank per operation) and direction (write, then read):
 *   contig   rank r's `size` bytes at byte r*size: MPI_File_write_at_all /
 *            MPI_File_read_at_all, default view
 *   strided  a view of etype MPI_BYTE whose filetype interleaves the ranks in
 *            blocks of `--block` bytes (default 64): a vector of
 *            ceil(size/block) blocks, stride nranks blocks, resized to
 *            nranks*ceil(size/block) blocks, at displacement r*block, so rank
 *            r owns every nranks-th block; each operation is MPI_File_seek(0,
 *            MPI_SEEK_SET) (local, timed) and MPI_File_write_all /
 *            MPI_File_read_all.  A size below the block is one block of
 *            `size` bytes per rank (the row is then contig's layout through a
 *            view); a size that is not a multiple of the block ends in part of
 *            one.
 *   indep    contig's layout with the independent MPI_File_write_at /
 *            MPI_File_read_at
 *   ordered  MPI_File_write_ordered / MPI_File_read_ordered, rank r's bytes
 *            at r*size again: every operation is preceded by a collective
 *            MPI_File_seek_shared(0, MPI_SEEK_SET), which is NOT timed (each
 *            operation is timed alone and the times added up)
 *   e32      contig's layout through a view of etype and filetype MPI_DOUBLE
 *            in the data representation "external32" (MPI-3.1 13.5.2):
 *            MPI_File_write_at_all / MPI_File_read_at_all of size/8 doubles,
 *            each stored big-endian, so byte i of a rank's data lies at
 *            byte 7 - i % 8 of its double in the file (sizes that are not
 *            a multiple of 8 are left out)
 *
 * What it does, for each pattern and size:
 *   1. MPI_File_set_size(0) (collective) and the pattern's view.
 *   2. The write row: one access whose status is checked, then a warm-up:
 *      accesses until `--warmup` of them (fewer for large sizes) are done or
 *      a quarter of the row's time budget is spent (rank 0 decides after
 *      groups of 1, 2, 4, ... accesses, so that every rank runs as many, as
 *      the collectives need); the slowest rank's mean time per access in it
 *      calibrates the repetitions: `--reps` repetitions of `iters`
 *      operations, `iters` being `--iters` scaled down for large sizes and
 *      slow operations so that the row takes about `--time` seconds (at
 *      least 16 or --iters, whichever is less; rank 0 decides, every rank
 *      runs the same).  Each repetition starts after an MPI_Barrier; its time
 *      is the largest over the ranks (MPI_Reduce MAX) of each rank's time per
 *      operation in it.
 *   3. After an MPI_Barrier, with the default view, each rank reads back
 *      every byte of the file where its data must be (independent
 *      MPI_File_read_at of that span) and compares each with what its last
 *      write put there.
 *   4. The read row, as step 2, of the data the last write left.
 *   5. Rank 0 prints each row: the median and the minimum over the
 *      repetitions in microseconds per operation, and the bandwidth the
 *      median implies for one rank (size / time; all ranks together move
 *      nranks times that).
 *
 * The data: rank r's buffer holds a byte pattern of the pattern, size and
 * rank, and write number k stamps a 64-bit value of k, size, rank and pattern
 * into its first word, one word per 4 KiB and its last word (bench_util.h;
 * a reused, untouched buffer flatters caches), so every write differs from
 * the one before and no rank's data or an earlier row's passes for
 * another's.  A read first spoils those words of its buffer (the complement
 * of what they should become), and they are checked after every read; the
 * stamping and these checks are timed with the accesses (a few words per
 * 4 KiB).  The first access of a row has its status's count checked, and
 * the first and the last read of a row every byte.  A row's CHECK FAILED
 * sums every rank's failures (a write row's includes step 3); each rank
 * prints its own first failure of a row to stderr.
 *
 * Output: a commented header (MPI library, host CPUs, every rank's allowed
 * CPUs and the CPU it ran on, the file) and a table, or with --csv the same
 * header lines and CSV.
 * Exit status 0, 1 for a usage error, 2 when a check of the data failed, 3
 * when an MPI call returned an error (the file's default error handler is
 * MPI_ERRORS_RETURN: every call's result is checked, and the first error
 * is printed and ends the job with MPI_Abort).
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
#include <sys/vfs.h>
#endif

#include "bench_sizes.h"
#include "bench_util.h"

enum {
    MAX_SIZES = 64,
    PLACE_LEN = 256,
    PATH_LEN = 4096,
    MIN_ITERS = 16,              /* per repetition, unless --iters is less */
    CHUNK = 16 * 1024 * 1024,    /* bytes per read of the file's check */
    EXIT_USAGE = 1,
    EXIT_DATA = 2,
    EXIT_MPI = 3,
};

enum pattern { PAT_CONTIG, PAT_STRIDED, PAT_INDEP, PAT_ORDERED, PAT_E32, NUM_PATTERNS };
static const char *const pattern_names[NUM_PATTERNS] = {"contig", "strided", "indep", "ordered", "e32"};

enum direction { DIR_WRITE, DIR_READ };
static const char *const dir_names[2] = {"write", "read"};

struct options {
    long sizes[MAX_SIZES];
    int nsizes;
    int patterns[NUM_PATTERNS];
    int npatterns;
    long block;   /* strided: bytes per block */
    char dir[PATH_LEN];
    long iters;   /* operations per repetition for small sizes */
    long warmup;  /* warm-up operations for small sizes */
    int reps;     /* timed repetitions per row */
    double time;  /* seconds budget per row (approximate) */
    int csv;
};

/* The file and what the rows need around it. */
struct bench {
    MPI_File fh;
    int rank, nranks;
    unsigned char *buf;     /* the operations' buffer */
    unsigned char *expect;  /* what the file holds of this rank after the last write */
    unsigned char *scratch; /* the file check's reads */
};

/* One row's layout: pattern, bytes per rank and operation, and (strided)
 * the block, never more than the size, and blocks per operation. */
struct geom {
    enum pattern pat;
    long size;
    long block;
    long nblocks;
};

struct row {
    long iters;
    double med, min; /* seconds per operation: the slowest rank's */
    long failures;
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
            "usage: %s [options]   (any number of ranks: all of MPI_COMM_WORLD take part)\n"
            "  --patterns LIST  contig (write_at_all/read_at_all), strided (write_all/read_all\n"
            "                   through a view interleaving the ranks' blocks), indep\n"
            "                   (write_at/read_at), ordered (write_ordered/read_ordered),\n"
            "                   e32 (write_at_all/read_at_all of doubles in \"external32\");\n"
            "                   default all\n"
            "  --sizes LIST     bytes per rank per operation: a comma list (8,64,1024) or a\n"
            "                   power-of-two range MIN:MAX (default 8,512,4k,64k,1m);\n"
            "                   suffixes k and m allowed\n"
            "  --block B        strided: bytes per block (default 64; a size below it is one\n"
            "                   block of that size)\n"
            "  --dir DIR        where the file goes (default $TMPDIR, else /tmp)\n"
            "  --iters N        operations per repetition for small sizes (default 1000)\n"
            "  --warmup N       warm-up operations for small sizes (default 100)\n"
            "  --reps R         timed repetitions per row (default 7)\n"
            "  --time S         approximate seconds per row; caps iterations (default 0.25)\n"
            "  --csv            print CSV instead of a table\n",
            argv0);
}

/* Returns 0 and fills `opt`, 1 for --help, -1 for a usage error. */
static int parse_args(int argc, char **argv, struct options *opt) {
    static const long default_sizes[] = {8, 512, 4096, 65536, 1048576};
    opt->nsizes = 0;
    for (size_t i = 0; i < sizeof default_sizes / sizeof default_sizes[0]; ++i) {
        opt->sizes[opt->nsizes++] = default_sizes[i];
    }
    opt->npatterns = NUM_PATTERNS;
    for (int k = 0; k < NUM_PATTERNS; ++k) opt->patterns[k] = k;
    opt->block = 64;
    const char *tmp = getenv("TMPDIR");
    snprintf(opt->dir, sizeof opt->dir, "%s", tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    opt->iters = 1000;
    opt->warmup = 100;
    opt->reps = 7;
    opt->time = 0.25;
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
            complain("io_bench: unknown option or missing value: '%s'\n", a);
            return -1;
        }
        ++i;
        if (strcmp(a, "--sizes") == 0) {
            opt->nsizes = bench_parse_sizes("io_bench", v, 1L << 30, opt->sizes, MAX_SIZES, quiet);
            if (opt->nsizes <= 0) return -1;
            for (int s = 0; s < opt->nsizes; ++s) {
                if (opt->sizes[s] < 1) {
                    complain("io_bench: --sizes: a size of 0 bytes moves nothing\n");
                    return -1;
                }
            }
        } else if (strcmp(a, "--patterns") == 0) {
            opt->npatterns = bench_parse_names("io_bench", "--patterns", v, pattern_names, NUM_PATTERNS, opt->patterns, quiet);
            if (opt->npatterns < 0) return -1;
        } else if (strcmp(a, "--block") == 0) {
            opt->block = bench_parse_size(v, 1L << 24);
            if (opt->block < 1) {
                complain("io_bench: --block '%s' is not a size from 1 byte to 16m\n", v);
                return -1;
            }
        } else if (strcmp(a, "--dir") == 0) {
            if (strlen(v) + 64 >= sizeof opt->dir || v[0] == '\0') {
                complain("io_bench: --dir '%s' is empty or too long\n", v);
                return -1;
            }
            snprintf(opt->dir, sizeof opt->dir, "%s", v);
        } else if (strcmp(a, "--iters") == 0) {
            opt->iters = atol(v);
        } else if (strcmp(a, "--warmup") == 0) {
            opt->warmup = atol(v);
        } else if (strcmp(a, "--reps") == 0) {
            opt->reps = atoi(v);
        } else if (strcmp(a, "--time") == 0) {
            opt->time = atof(v);
        } else {
            complain("io_bench: unknown option '%s'\n", a);
            return -1;
        }
    }
    if (opt->iters < 1 || opt->warmup < 0 || opt->reps < 1 || opt->time <= 0) {
        complain("io_bench: --iters, --reps and --time must be positive; --warmup must not be negative\n");
        return -1;
    }
    if (strlen(opt->dir) + 64 >= sizeof opt->dir) {
        complain("io_bench: the directory '%s' is too long\n", opt->dir);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- MPI errors */

/* Ends the job when an MPI call returned an error (files' default error
 * handler is MPI_ERRORS_RETURN). */
static void mpi_check(int rc, const char *call, const struct geom *g, int rank) {
    if (rc == MPI_SUCCESS) return;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "error code %d", rc);
    if (g != NULL) {
        fprintf(stderr, "io_bench: rank %d: %s (%s, %ld B) failed: %s\n", rank, call, pattern_names[g->pat],
                g->size, msg);
    } else {
        fprintf(stderr, "io_bench: rank %d: %s failed: %s\n", rank, call, msg);
    }
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, EXIT_MPI);
}

/* ---------------------------------------------------------------- data */

/* Rank `rank`'s byte `i` of a row of pattern `pat` and size `size`. */
static unsigned char data_byte(long i, long size, int rank, enum pattern pat) {
    return (unsigned char)(i * 7 + size * 13 + rank * 29 + (long)pat * 61 + 1);
}

/* The stamp of write number `k` of a rank's row. */
static uint64_t data_stamp(uint64_t k, long size, int rank, enum pattern pat) {
    return bench_stamp_of(k, size) ^ ((uint64_t)(rank + 1) << 40) ^ ((uint64_t)(pat + 1) << 58);
}

/* The file position of byte `i` of rank `rank`'s data in a row. */
static MPI_Offset file_pos(const struct geom *g, int rank, int nranks, long i) {
    if (g->pat == PAT_E32) return (MPI_Offset)rank * g->size + (i - i % 8) + 7 - i % 8;
    if (g->pat != PAT_STRIDED) return (MPI_Offset)rank * g->size + i;
    return ((MPI_Offset)(i / g->block) * nranks + rank) * g->block + i % g->block;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median and minimum of `t[0..reps)`, sorted in place. */
static void summarize(double *t, int reps, struct row *r) {
    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
    r->min = t[0];
    int mid = reps / 2;
    r->med = reps % 2 ? t[mid] : (t[mid - 1] + t[mid]) / 2;
}

/* The iterations of one repetition, from `per_op` seconds measured in the
 * warm-up, within [min(MIN_ITERS, --iters), --iters] and the 256 MiB cap. */
static long iterations(const struct options *opt, long size, double per_op) {
    long cap = (256L * 1024 * 1024) / size;
    long iters = opt->iters < cap ? opt->iters : cap;
    long affordable = (long)(opt->time * 0.75 / opt->reps / (per_op > 0 ? per_op : 1e-9));
    if (affordable < iters) iters = affordable;
    long floor = opt->iters < MIN_ITERS ? opt->iters : MIN_ITERS;
    return iters < floor ? floor : iters;
}

/* Warm-up operations: --warmup, capped at 64 MiB per rank, at least 2. */
static long warmups(const struct options *opt, long size) {
    long cap = (256L * 1024 * 1024) / size / 4;
    long w = opt->warmup < cap ? opt->warmup : cap;
    return w < 2 ? 2 : w;
}

/* ---------------------------------------------------------------- views */

/* Whether the pattern's view is not the default one. */
static int own_view(const struct geom *g) { return g->pat == PAT_STRIDED || g->pat == PAT_E32; }

/* The pattern's view: strided's interleaving filetype (returned in `ft`,
 * for the caller to free), e32's doubles in external32, the default view
 * for the others. */
static void set_pattern_view(struct bench *b, const struct geom *g, MPI_Datatype *ft) {
    *ft = MPI_DATATYPE_NULL;
    if (g->pat == PAT_E32) {
        mpi_check(MPI_File_set_view(b->fh, 0, MPI_DOUBLE, MPI_DOUBLE, "external32", MPI_INFO_NULL),
                  "MPI_File_set_view", g, b->rank);
        return;
    }
    if (g->pat != PAT_STRIDED) {
        mpi_check(MPI_File_set_view(b->fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), "MPI_File_set_view",
                  g, b->rank);
        return;
    }
    MPI_Datatype vec;
    MPI_Type_vector((int)g->nblocks, (int)g->block, (int)(g->block * b->nranks), MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)g->nblocks * b->nranks * g->block, ft);
    MPI_Type_commit(ft);
    MPI_Type_free(&vec);
    mpi_check(MPI_File_set_view(b->fh, (MPI_Offset)b->rank * g->block, MPI_BYTE, *ft, "native", MPI_INFO_NULL),
              "MPI_File_set_view", g, b->rank);
}

static void default_view(struct bench *b, const struct geom *g, MPI_Datatype *ft) {
    mpi_check(MPI_File_set_view(b->fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), "MPI_File_set_view", g,
              b->rank);
    if (*ft != MPI_DATATYPE_NULL) MPI_Type_free(ft);
}

/* ---------------------------------------------------------------- operations */

/* One access of the row's pattern and direction with `buf`; ordered's
 * seek_shared is the caller's.  Ends the job on an MPI error. */
static void access_once(struct bench *b, const struct geom *g, enum direction dir, unsigned char *buf,
                        MPI_Status *st) {
    int n = (int)g->size;
    MPI_Offset at = (MPI_Offset)b->rank * g->size;
    int rc = MPI_SUCCESS;
    const char *call = "";
    switch (g->pat) {
        case PAT_CONTIG:
            if (dir == DIR_WRITE) {
                call = "MPI_File_write_at_all";
                rc = MPI_File_write_at_all(b->fh, at, buf, n, MPI_BYTE, st);
            } else {
                call = "MPI_File_read_at_all";
                rc = MPI_File_read_at_all(b->fh, at, buf, n, MPI_BYTE, st);
            }
            break;
        case PAT_STRIDED:
            call = "MPI_File_seek";
            rc = MPI_File_seek(b->fh, 0, MPI_SEEK_SET);
            if (rc != MPI_SUCCESS) break;
            if (dir == DIR_WRITE) {
                call = "MPI_File_write_all";
                rc = MPI_File_write_all(b->fh, buf, n, MPI_BYTE, st);
            } else {
                call = "MPI_File_read_all";
                rc = MPI_File_read_all(b->fh, buf, n, MPI_BYTE, st);
            }
            break;
        case PAT_INDEP:
            if (dir == DIR_WRITE) {
                call = "MPI_File_write_at";
                rc = MPI_File_write_at(b->fh, at, buf, n, MPI_BYTE, st);
            } else {
                call = "MPI_File_read_at";
                rc = MPI_File_read_at(b->fh, at, buf, n, MPI_BYTE, st);
            }
            break;
        case PAT_E32:
            if (dir == DIR_WRITE) {
                call = "MPI_File_write_at_all";
                rc = MPI_File_write_at_all(b->fh, at / 8, buf, n / 8, MPI_DOUBLE, st);
            } else {
                call = "MPI_File_read_at_all";
                rc = MPI_File_read_at_all(b->fh, at / 8, buf, n / 8, MPI_DOUBLE, st);
            }
            break;
        case PAT_ORDERED:
            if (dir == DIR_WRITE) {
                call = "MPI_File_write_ordered";
                rc = MPI_File_write_ordered(b->fh, buf, n, MPI_BYTE, st);
            } else {
                call = "MPI_File_read_ordered";
                rc = MPI_File_read_ordered(b->fh, buf, n, MPI_BYTE, st);
            }
            break;
        default: break;
    }
    mpi_check(rc, call, g, b->rank);
}

/* Says what went wrong at a rank's first failed check of a row. */
static void wrong(const struct bench *b, const struct geom *g, enum direction dir, const char *when,
                  const char *what) {
    fprintf(stderr, "io_bench: rank %d: %s, %ld B, %s, %s: %s\n", b->rank, pattern_names[g->pat], g->size,
            dir_names[dir], when, what);
}

/* The count of an access's status against the size; 1 when it differs. */
static int count_wrong(const struct bench *b, const struct geom *g, enum direction dir, const MPI_Status *st,
                       const char *when) {
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    if (count == (int)g->size) return 0;
    char what[96];
    snprintf(what, sizeof what, "the status counts %d bytes, not %ld", count, g->size);
    wrong(b, g, dir, when, what);
    return 1;
}

/* Access number `k` of a row: a write stamps its buffer first; a read
 * spoils the stamped words and checks them after (`stamp`: what they must
 * be).  Ordered rows reset the shared pointer first and add the access's
 * own time to `*elapsed`.  Returns 1 when the read's stamps are wrong. */
static int one_op(struct bench *b, const struct geom *g, enum direction dir, uint64_t k, uint64_t stamp,
                  double *elapsed, MPI_Status *st) {
    if (dir == DIR_WRITE) {
        bench_stamp(b->buf, g->size, data_stamp(k, g->size, b->rank, g->pat));
    } else {
        bench_stamp(b->buf, g->size, ~stamp);
    }
    if (g->pat == PAT_ORDERED) {
        mpi_check(MPI_File_seek_shared(b->fh, 0, MPI_SEEK_SET), "MPI_File_seek_shared", g, b->rank);
        double t0 = MPI_Wtime();
        access_once(b, g, dir, b->buf, st);
        *elapsed += MPI_Wtime() - t0;
    } else {
        access_once(b, g, dir, b->buf, st);
    }
    return dir == DIR_READ && !bench_stamp_ok(b->buf, g->size, stamp);
}

/* The first byte where `got` and `want` differ, or -1. */
static long first_diff(const unsigned char *got, const unsigned char *want, long size) {
    if (memcmp(got, want, (size_t)size) == 0) return -1;
    for (long i = 0; i < size; ++i) {
        if (got[i] != want[i]) return i;
    }
    return -1;
}

/* A full check of a read's buffer against `expect`; 1 when it is wrong. */
static int full_wrong(const struct bench *b, const struct geom *g, const char *when) {
    long bad = first_diff(b->buf, b->expect, g->size);
    if (bad < 0) return 0;
    char what[128];
    snprintf(what, sizeof what, "byte %ld is %u, the file should hold %u", bad, b->buf[bad], b->expect[bad]);
    wrong(b, g, DIR_READ, when, what);
    return 1;
}

/* A write or read row, every rank; a read row's stamps must be `stamp` and
 * its bytes `b->expect`.  Returns the number of accesses (a write row's
 * last stamp is that of one less); `r` gets the times at rank 0 and this
 * rank's failures. */
static uint64_t run_row(const struct options *opt, struct bench *b, const struct geom *g, enum direction dir,
                        uint64_t stamp, double *t, struct row *r) {
    long failures = 0;
    uint64_t k = 0;
    MPI_Status st;
    double elapsed = 0;
    for (long i = 0; i < g->size; ++i) {
        b->buf[i] = dir == DIR_WRITE ? data_byte(i, g->size, b->rank, g->pat) : (unsigned char)~b->expect[i];
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* The first access: its status's count, and a read's every byte. */
    one_op(b, g, dir, k++, stamp, &elapsed, &st);
    if (count_wrong(b, g, dir, &st, "the first")) {
        ++failures;
    } else if (dir == DIR_READ) {
        failures += full_wrong(b, g, "the first");
    }

    /* Warm-up: until `warmups()` accesses are done or a quarter of the time
     * budget is spent, rank 0 deciding after groups of 1, 2, 4, ... (every
     * rank must run as many); the slowest rank's mean time of the whole loop
     * (ordered: seek_shared included) calibrates. */
    long warmup = warmups(opt, g->size), done = 0;
    int go = 1;
    double t0 = MPI_Wtime();
    for (long group = 1; go; group *= 2) {
        for (long w = 0; w < group && done < warmup; ++w, ++done) {
            int wr = one_op(b, g, dir, k++, stamp, &elapsed, &st);
            if (wr && failures == 0) wrong(b, g, dir, "warm-up", "the stamps read are not the last write's");
            failures += wr;
        }
        go = done < warmup && MPI_Wtime() - t0 < opt->time / 4;
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    double per_op = (MPI_Wtime() - t0) / (double)(done > 0 ? done : 1), slowest = 0;
    MPI_Reduce(&per_op, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    long iters = iterations(opt, g->size, slowest);
    MPI_Bcast(&iters, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    r->iters = iters;

    for (int rep = 0; rep < opt->reps; ++rep) {
        MPI_Barrier(MPI_COMM_WORLD);
        elapsed = 0;
        double start = MPI_Wtime();
        for (long it = 0; it < iters; ++it) {
            int wr = one_op(b, g, dir, k++, stamp, &elapsed, &st);
            if (wr && failures == 0) {
                char when[64];
                snprintf(when, sizeof when, "repetition %d, operation %ld", rep, it);
                wrong(b, g, dir, when, "the stamps read are not the last write's");
            }
            failures += wr;
        }
        double mine = (g->pat == PAT_ORDERED ? elapsed : MPI_Wtime() - start) / (double)iters;
        MPI_Reduce(&mine, &t[rep], 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    }

    /* The last read, in full. */
    if (dir == DIR_READ && failures == 0) failures += full_wrong(b, g, "the last");
    if (b->rank == 0) summarize(t, opt->reps, r);
    r->failures = failures;
    return k;
}

/* Step 3: this rank reads, with the default view, the span of the file where
 * its data lies and compares every byte of its own with `b->expect`.
 * Returns 1 when one differs or a read comes short. */
static int check_file(struct bench *b, const struct geom *g) {
    MPI_Offset lo = file_pos(g, b->rank, b->nranks, 0);
    MPI_Offset hi = file_pos(g, b->rank, b->nranks, g->size - 1) + 1;
    if (g->pat == PAT_E32) { /* each double's bytes reversed: its span, in chunks of whole doubles */
        lo = (MPI_Offset)b->rank * g->size;
        hi = lo + g->size;
    }
    long i = 0;
    for (MPI_Offset c = lo; c < hi; c += CHUNK) {
        int len = (int)(hi - c < CHUNK ? hi - c : CHUNK);
        MPI_Status st;
        mpi_check(MPI_File_read_at(b->fh, c, b->scratch, len, MPI_BYTE, &st), "MPI_File_read_at (the check)", g,
                  b->rank);
        int count = -1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (count != len) {
            char what[160];
            snprintf(what, sizeof what, "reading back %d bytes at %lld got %d: the file is too short", len,
                     (long long)c, count);
            wrong(b, g, DIR_WRITE, "after the row", what);
            return 1;
        }
        for (; i < g->size; ++i) {
            MPI_Offset p = file_pos(g, b->rank, b->nranks, i);
            if (p >= c + len) break;
            if (b->scratch[p - c] != b->expect[i]) {
                char what[192];
                snprintf(what, sizeof what, "file byte %lld (this rank's byte %ld) is %u, the last write put %u",
                         (long long)p, i, b->scratch[p - c], b->expect[i]);
                wrong(b, g, DIR_WRITE, "after the row", what);
                return 1;
            }
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- main */

/* The name of the file system of `dir`'s magic number, or NULL. */
static const char *fs_name(const char *dir, char *buf, size_t len) {
#ifdef __linux__
    struct statfs sfs;
    if (statfs(dir, &sfs) != 0) return NULL;
    static const struct { unsigned long magic; const char *name; } known[] = {
        {0x01021994UL, "tmpfs"}, {0xEF53UL, "ext2/3/4"}, {0x58465342UL, "xfs"}, {0x9123683EUL, "btrfs"},
        {0x794C7630UL, "overlayfs"}, {0x6969UL, "nfs"}, {0x65735546UL, "fuse"}, {0x2FC12FC1UL, "zfs"},
        {0x858458F6UL, "ramfs"}, {0x01021997UL, "9p"},
    };
    unsigned long magic = (unsigned long)sfs.f_type;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i) {
        if (known[i].magic == magic) return known[i].name;
    }
    snprintf(buf, len, "magic %#lx", magic);
    return buf;
#else
    (void)dir;
    (void)buf;
    (void)len;
    return NULL;
#endif
}

static void print_header(const struct options *opt, const char *places, int nranks, const char *path) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    char *nl = strchr(version, '\n');
    if (nl != NULL) *nl = '\0';
    int major = 0, minor = 0;
    MPI_Get_version(&major, &minor);
    char fsbuf[64];
    const char *fs = fs_name(opt->dir, fsbuf, sizeof fsbuf);
    printf("# io_bench: MPI-IO, every rank of MPI_COMM_WORLD on its own part of one file\n");
    printf("# MPI library: %s\n", version);
    printf("# MPI standard: %d.%d\n", major, minor);
    printf("# host CPUs online: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
    printf("# ranks: %d\n", nranks);
    for (int r = 0; r < nranks; ++r) printf("# rank %d: %s\n", r, places + (size_t)r * PLACE_LEN);
    printf("# file: %s (file system: %s), MPI_MODE_DELETE_ON_CLOSE, no hints\n", path, fs ? fs : "unknown");
    printf("# reps per row: %d, time budget per row: %.2f s, strided blocks of %ld B\n", opt->reps, opt->time,
           opt->block);
    printf("# us per operation: the slowest rank's mean in a repetition (ordered: seek_shared not timed); "
           "MB/s: one rank's bytes over the median\n");
    if (opt->csv) {
        printf("pattern,dir,size_bytes,iters,reps,us_median,us_min,MBps_median\n");
    } else {
        printf("%-8s %-5s %10s %8s %12s %12s %12s\n", "pattern", "dir", "size(B)", "iters", "us_med", "us_min",
               "MB/s_med");
    }
    fflush(stdout);
}

static void print_row(const struct options *opt, const struct geom *g, enum direction dir, const struct row *r,
                      long failures) {
    double bw = r->med > 0 ? (double)g->size / r->med / 1e6 : 0;
    if (opt->csv) {
        printf("%s,%s,%ld,%ld,%d,%.3f,%.3f,%.2f\n", pattern_names[g->pat], dir_names[dir], g->size, r->iters,
               opt->reps, r->med * 1e6, r->min * 1e6, bw);
    } else {
        printf("%-8s %-5s %10ld %8ld %12.3f %12.3f %12.2f%s\n", pattern_names[g->pat], dir_names[dir], g->size,
               r->iters, r->med * 1e6, r->min * 1e6, bw, failures > 0 ? "  CHECK FAILED" : "");
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
        return parsed == 1 ? 0 : EXIT_USAGE;
    }

    long max_size = 8;
    for (int i = 0; i < opt.nsizes; ++i) {
        if (opt.sizes[i] > max_size) max_size = opt.sizes[i];
    }
    struct bench b;
    memset(&b, 0, sizeof b);
    b.rank = rank;
    b.nranks = nranks;
    b.buf = malloc((size_t)max_size);
    b.expect = malloc((size_t)max_size);
    b.scratch = malloc(CHUNK);
    double *t = malloc(sizeof(double) * (size_t)opt.reps);
    char *places = malloc((size_t)nranks * PLACE_LEN);
    if (b.buf == NULL || b.expect == NULL || b.scratch == NULL || t == NULL || places == NULL) {
        fprintf(stderr, "io_bench: rank %d: cannot allocate 2 x %ld + %d bytes\n", rank, max_size, (int)CHUNK);
        MPI_Abort(MPI_COMM_WORLD, EXIT_USAGE);
        return EXIT_USAGE;
    }
    memset(b.buf, 0, (size_t)max_size);
    memset(b.expect, 0, (size_t)max_size);

    /* Where every rank runs, and the file's name: rank 0's. */
    char place[PLACE_LEN];
    bench_placement(place, sizeof place);
    MPI_Gather(place, PLACE_LEN, MPI_CHAR, places, PLACE_LEN, MPI_CHAR, 0, MPI_COMM_WORLD);
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/io_bench.%ld", opt.dir, (long)getpid());
    MPI_Bcast(path, PATH_LEN, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < nranks; ++r) places[(size_t)r * PLACE_LEN + PLACE_LEN - 1] = '\0';
        print_header(&opt, places, nranks, path);
    }
    mpi_check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                            MPI_INFO_NULL, &b.fh),
              "MPI_File_open", NULL, rank);

    long failures = 0;
    for (int p = 0; p < opt.npatterns; ++p) {
        for (int s = 0; s < opt.nsizes; ++s) {
            struct geom g;
            g.pat = (enum pattern)opt.patterns[p];
            g.size = opt.sizes[s];
            g.block = g.size < opt.block ? g.size : opt.block;
            g.nblocks = (g.size + g.block - 1) / g.block;
            if (g.pat == PAT_E32 && g.size % 8 != 0) continue;  /* (the same on every rank) */
            MPI_Datatype ft;
            struct row w = {0, 0, 0, 0}, rd = {0, 0, 0, 0};
            long bad = 0, all = 0;

            /* 1. An empty file, no earlier row's data in it; the view. */
            mpi_check(MPI_File_set_size(b.fh, 0), "MPI_File_set_size", &g, rank);
            set_pattern_view(&b, &g, &ft);

            /* 2. The write row. */
            uint64_t writes = run_row(&opt, &b, &g, DIR_WRITE, 0, t, &w);
            uint64_t last = data_stamp(writes - 1, g.size, rank, g.pat);
            for (long i = 0; i < g.size; ++i) b.expect[i] = data_byte(i, g.size, rank, g.pat);
            bench_stamp(b.expect, g.size, last);

            /* 3. The file's content, every rank its own bytes. */
            MPI_Barrier(MPI_COMM_WORLD);
            if (own_view(&g)) default_view(&b, &g, &ft);
            bad = w.failures + check_file(&b, &g);
            MPI_Reduce(&bad, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
            if (rank == 0) {
                failures += all;
                print_row(&opt, &g, DIR_WRITE, &w, all);
            }

            /* 4. The read row. */
            if (own_view(&g)) set_pattern_view(&b, &g, &ft);
            run_row(&opt, &b, &g, DIR_READ, last, t, &rd);
            MPI_Reduce(&rd.failures, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
            if (rank == 0) {
                failures += all;
                print_row(&opt, &g, DIR_READ, &rd, all);
            }
            if (own_view(&g)) default_view(&b, &g, &ft);
        }
    }
    mpi_check(MPI_File_close(&b.fh), "MPI_File_close", NULL, rank);
    if (rank == 0 && failures > 0) printf("# DATA CHECK FAILED: %ld mismatches\n", failures);
    MPI_Bcast(&failures, 1, MPI_LONG, 0, MPI_COMM_WORLD);

    free(b.buf);
    free(b.expect);
    free(b.scratch);
    free(t);
    free(places);
    MPI_Finalize();
    return failures > 0 ? EXIT_DATA : 0;
}
