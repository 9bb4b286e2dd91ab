/*
 * diff_common.h: what the *_diff.c programs share.
 * Header-only: each program is one file that external-checks.sh builds with
 * shmpi's, MPICH's and Open MPI's mpicc alike.
 */
#ifndef SHMPI_TEST_EXTERNAL_DIFF_COMMON_H
#define SHMPI_TEST_EXTERNAL_DIFF_COMMON_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

static DIFF_UNUSED MPI_Aint extent_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

/* What make_type() builds its types of: the leaves (ntypes predefined types)
 * and the members a struct puts after its old type (nmembers of them). */
struct leaves {
    int ntypes;
    const MPI_Datatype *types;
    const char *const *names;
    int nmembers;
    const MPI_Datatype *members;
    const char *const *member_names;
};

/* The leaves of coll_diff's and rma_diff's types: six basic types, and int
 * or double members after the old type in a struct. */
static const MPI_Datatype mixed_types[] DIFF_UNUSED = {MPI_INT,        MPI_CHAR,       MPI_DOUBLE,
                                                       MPI_SHORT_INT, MPI_DOUBLE_INT, MPI_2INT};
static const char *const mixed_names[] DIFF_UNUSED = {"int", "char", "double", "short_int", "double_int", "2int"};
static const MPI_Datatype mixed_members[] DIFF_UNUSED = {MPI_DOUBLE, MPI_INT};
static const char *const mixed_member_names[] DIFF_UNUSED = {"double", "int"};
static const struct leaves mixed_leaves DIFF_UNUSED = {6, mixed_types, mixed_names, 2, mixed_members,
                                                       mixed_member_names};

/* A random type of depth levels at most over the leaves of lv, described
 * in d, without overlapping parts: every constructor places its copies of
 * the old type at growing offsets, at least one extent apart. */
static DIFF_UNUSED MPI_Datatype make_type(int depth, const struct leaves *lv, char *d)
{
    MPI_Datatype t, old;
    if (depth == 0 || rnd(3) == 0) {
        const int k = (int)rnd((unsigned)lv->ntypes);
        MPI_Type_dup(lv->types[k], &t);
        add(d, "%s", lv->names[k]);
        return t;
    }
    char sub[DESC] = "";
    int kind = (int)rnd(8), c = irnd(1, 4), b = irnd(1, 3), gap = irnd(0, 2), n = irnd(1, 3), bl[3], di[3];
    MPI_Aint ad[3], grow = irnd(0, 12);
    int sizes[2], subs[2], starts[2], nd = irnd(1, 2), order = rnd(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    for (int i = 0; i < nd; i++) {
        sizes[i] = irnd(1, 4);
        subs[i] = irnd(1, sizes[i]);
        starts[i] = irnd(0, sizes[i] - subs[i]);
    }
    for (int i = 0; i < n; i++) bl[i] = irnd(1, 2); /* no empty parts: MPI leaves their bounds open */
    old = make_type(depth - 1, lv, sub);
    const MPI_Aint ext = extent_of(old);
    switch (kind) {
    case 0: MPI_Type_contiguous(c, old, &t); add(d, "contig(%d,", c); break;
    case 1: MPI_Type_vector(c, b, b + gap, old, &t); add(d, "vector(%d,%d,%d,", c, b, b + gap); break;
    case 2:
        MPI_Type_create_hvector(c, b, b * ext + grow, old, &t);
        add(d, "hvector(%d,%d,%ld,", c, b, (long)(b * ext + grow));
        break;
    case 3:
        for (int i = 0, at = irnd(0, 2); i < n; i++) { di[i] = at; at += bl[i] + irnd(0, 2); }
        MPI_Type_indexed(n, bl, di, old, &t);
        add(d, "indexed(");
        for (int i = 0; i < n; i++) add(d, "%d:%d ", bl[i], di[i]);
        add(d, ",");
        break;
    case 4: {
        MPI_Aint at = irnd(0, 9);
        for (int i = 0; i < n; i++) { ad[i] = at; at += bl[i] * ext + irnd(0, 9); }
        MPI_Type_create_hindexed(n, bl, ad, old, &t);
        add(d, "hindexed(");
        for (int i = 0; i < n; i++) add(d, "%d:%ld ", bl[i], (long)ad[i]);
        add(d, ",");
        break;
    }
    case 5:
        for (int i = 0, at = irnd(0, 2); i < n; i++) { di[i] = at; at += b + irnd(0, 2); }
        MPI_Type_create_indexed_block(n, b, di, old, &t);
        add(d, "indexed_block(%d;", b);
        for (int i = 0; i < n; i++) add(d, "%d ", di[i]);
        add(d, ",");
        break;
    case 6: {
        /* the old type, then members after it */
        MPI_Datatype ty[3];
        const char *names[3] = {"*", "", ""};
        MPI_Aint at = irnd(0, 9);
        int lens[3];
        for (int i = 0; i < n; i++) {
            ty[i] = old;
            if (i > 0) {
                const int k = (int)rnd((unsigned)lv->nmembers);
                ty[i] = lv->members[k];
                names[i] = lv->member_names[k];
            }
            lens[i] = i == 0 ? b : bl[i];
            ad[i] = at;
            at += lens[i] * extent_of(ty[i]) + irnd(0, 9);
        }
        MPI_Type_create_struct(n, lens, ad, ty, &t);
        add(d, "struct(");
        for (int i = 0; i < n; i++) add(d, "%d:%ld:%s ", lens[i], (long)ad[i], names[i]);
        add(d, ",");
        break;
    }
    default:
        MPI_Type_create_subarray(nd, sizes, subs, starts, order, old, &t);
        add(d, "subarray(%s;", order == MPI_ORDER_C ? "C" : "F");
        for (int i = 0; i < nd; i++) add(d, "%d/%d@%d ", sizes[i], subs[i], starts[i]);
        add(d, ",");
        break;
    }
    add(d, "%s)", sub);
    MPI_Type_free(&old);
    /* Explicit bounds around the data, the extent a multiple of 16: MPI
     * rounds an extent up to its types' alignment (MPI-3.1 4.1.6), which
     * MPICH does for structs only, so without them MPICH's elements land
     * elsewhere and the round says nothing (dtype_diff.c compares extents). */
    MPI_Aint tlb, text;
    MPI_Datatype r;
    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Type_create_resized(t, tlb, (text + 15) / 16 * 16, &r);
    MPI_Type_free(&t);
    return r;
}

/* The name of the error class of rc without "MPI_" ("ok" for MPI_SUCCESS):
 * the classes' numbers differ between implementations. */
static DIFF_UNUSED const char *error_class_name(int rc)
{
    if (rc == MPI_SUCCESS) return "ok";
    int c = -1;
    if (MPI_Error_class(rc, &c) != MPI_SUCCESS) return "unknown-code";
    static const struct {
        int cls;
        const char *name;
    } names[] = {
#define N(x) {x, #x}
        N(MPI_ERR_BUFFER), N(MPI_ERR_COUNT), N(MPI_ERR_TYPE), N(MPI_ERR_TAG), N(MPI_ERR_COMM),
        N(MPI_ERR_RANK), N(MPI_ERR_REQUEST), N(MPI_ERR_ROOT), N(MPI_ERR_GROUP), N(MPI_ERR_OP),
        N(MPI_ERR_TOPOLOGY), N(MPI_ERR_DIMS), N(MPI_ERR_ARG), N(MPI_ERR_UNKNOWN), N(MPI_ERR_TRUNCATE),
        N(MPI_ERR_OTHER), N(MPI_ERR_INTERN), N(MPI_ERR_PENDING), N(MPI_ERR_IN_STATUS), N(MPI_ERR_INFO_KEY),
        N(MPI_ERR_INFO_NOKEY), N(MPI_ERR_INFO_VALUE), N(MPI_ERR_INFO), N(MPI_ERR_KEYVAL), N(MPI_ERR_NO_MEM),
        N(MPI_ERR_NOT_SAME), N(MPI_ERR_UNSUPPORTED_OPERATION), N(MPI_ERR_SIZE), N(MPI_ERR_BASE),
        N(MPI_ERR_NAME), N(MPI_ERR_SPAWN), N(MPI_ERR_PORT), N(MPI_ERR_SERVICE), N(MPI_ERR_WIN),
        N(MPI_ERR_DISP), N(MPI_ERR_ASSERT), N(MPI_ERR_UNSUPPORTED_DATAREP), N(MPI_ERR_FILE),
        N(MPI_ERR_AMODE), N(MPI_ERR_NO_SUCH_FILE), N(MPI_ERR_FILE_EXISTS), N(MPI_ERR_BAD_FILE),
        N(MPI_ERR_ACCESS), N(MPI_ERR_NO_SPACE), N(MPI_ERR_QUOTA), N(MPI_ERR_READ_ONLY),
        N(MPI_ERR_FILE_IN_USE), N(MPI_ERR_DUP_DATAREP), N(MPI_ERR_CONVERSION), N(MPI_ERR_IO),
        N(MPI_ERR_LOCKTYPE), N(MPI_ERR_RMA_SYNC), N(MPI_ERR_RMA_CONFLICT), N(MPI_ERR_RMA_RANGE),
        N(MPI_ERR_RMA_ATTACH), N(MPI_ERR_RMA_SHARED), N(MPI_ERR_RMA_FLAVOR),
        /* the tool interface's return codes are classes too (MPI-3.1 14.3.9) */
        N(MPI_T_ERR_MEMORY), N(MPI_T_ERR_NOT_INITIALIZED), N(MPI_T_ERR_CANNOT_INIT), N(MPI_T_ERR_INVALID_INDEX),
        N(MPI_T_ERR_INVALID_ITEM), N(MPI_T_ERR_INVALID_HANDLE), N(MPI_T_ERR_OUT_OF_HANDLES),
        N(MPI_T_ERR_OUT_OF_SESSIONS), N(MPI_T_ERR_INVALID_SESSION), N(MPI_T_ERR_CVAR_SET_NOT_NOW),
        N(MPI_T_ERR_CVAR_SET_NEVER), N(MPI_T_ERR_PVAR_NO_STARTSTOP), N(MPI_T_ERR_PVAR_NO_WRITE),
        N(MPI_T_ERR_PVAR_NO_ATOMIC), N(MPI_T_ERR_INVALID_NAME), N(MPI_T_ERR_INVALID),
#undef N
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].cls == c) return names[i].name + 4;
    return "ERR_(other class)";
}

/* A buffer for elements [0, n) of a type, and the offset of element 0 in
 * it. */
struct region {
    unsigned char *mem;
    size_t bytes;
    MPI_Aint origin;
};

static DIFF_UNUSED struct region region_for(MPI_Datatype t, long n)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    struct region r;
    r.origin = -tlb;
    r.bytes = n > 0 ? (size_t)((n - 1) * ext + text) : 0;
    r.mem = malloc(r.bytes + 1);
    return r;
}

/* Send data: bytes that depend on the offset and on the rank. */
static DIFF_UNUSED void fill(struct region *r, int rank)
{
    for (size_t i = 0; i < r->bytes; i++) r->mem[i] = (unsigned char)(i * 7 + (size_t)rank * 61 + 1);
}

/* Receive buffers start as 0xEE, gaps included, so that a byte written
 * where the type has a gap shows. */
static DIFF_UNUSED void clear(struct region *r) { memset(r->mem, 0xEE, r->bytes); }

/* An FNV-1a hash of the region's every byte. */
static DIFF_UNUSED uint64_t hash_of(const struct region *r)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < r->bytes; i++) h = (h ^ r->mem[i]) * 1099511628211ULL;
    return h;
}

static DIFF_UNUSED void *at(struct region *r) { return r->mem + r->origin; }

/* The main of coll_diff and p2p_diff: `mpirun -n N NAME ROUNDS PREFIX
 * [START]` calls round(me, np, r) for each round r from START (default 0)
 * to ROUNDS - 1, each after a line "== r" in PREFIX.RANK, which *out is;
 * N at most max_np. */
static DIFF_UNUSED int rounds_main(int argc, char **argv, const char *name, int max_np, FILE **out,
                                   void (*round)(int me, int np, int r))
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 3 || np > max_np) {
        if (me == 0) fprintf(stderr, "usage: mpirun -n N %s ROUNDS PREFIX [START] (N up to %d)\n", name, max_np);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    *out = open_rank_file(argv[2], me);
    const int rounds = atoi(argv[1]);
    for (int r = argc > 3 ? atoi(argv[3]) : 0; r < rounds; r++) {
        fprintf(*out, "== %d\n", r);
        round(me, np, r);
    }
    fclose(*out);
    MPI_Finalize();
    return 0;
}

#endif
