/*
 * dtype_diff.c: random derived datatypes, described by what MPI says of
 * them, for scripts/external-checks.sh's `diff` check.  The same source is
 * built with shmpi's, MPICH's and Open MPI's mpicc; diff_compare.py reads
 * the outputs.
 *
 *   dtype_diff N SEED [START]
 *
 * prints one line for each type I of START..N-1 (type I depends only on
 * SEED and I, so a run can start anywhere):
 *
 *   I DESCRIPTION | size S lb L ext E tlb T text X count C packed P hash H flags F
 *
 * DESCRIPTION is the constructor tree (a failed constructor is marked
 * "=ERR_<class>" and replaced by MPI_INT); size, lb, ext, tlb and text are
 * MPI_Type_size, MPI_Type_get_extent and MPI_Type_get_true_extent (the true
 * bounds of an empty type are printed as 0: MPI leaves them open); C
 * elements of the type are packed from a patterned buffer (P bytes), and H
 * hashes the packed bytes and the buffer after unpacking them into a zeroed
 * one: H shows where every byte went.  F is "-" or letters:
 *   z  a part of the type is empty (size 0): MPI does not say where the
 *      bounds of an empty part lie, and implementations place them apart
 *   l  the type holds MPI_LONG_DOUBLE, whose 6 padding bytes an
 *      implementation may or may not copy
 * Types that the SKIP variable names (",I,J,") are left out:
 * scripts/external-checks.sh uses it to step over a type that crashes one
 * implementation.
 */
#include <stdlib.h>

#include "diff_common.h"

static int empty_part, has_long_double;

/* A predefined type; its name goes to `name`.  (Handles are not constants
 * in every implementation, so no table of them.) */
static MPI_Datatype basic(const char **name)
{
    switch (rnd(11)) {
    case 0: *name = "char"; return MPI_CHAR;
    case 1: *name = "short"; return MPI_SHORT;
    case 2: *name = "int"; return MPI_INT;
    case 3: *name = "double"; return MPI_DOUBLE;
    case 4: *name = "long_double"; has_long_double = 1; return MPI_LONG_DOUBLE;
    case 5: *name = "float_int"; return MPI_FLOAT_INT;
    case 6: *name = "double_int"; return MPI_DOUBLE_INT;
    case 7: *name = "short_int"; return MPI_SHORT_INT;
    case 8: *name = "2int"; return MPI_2INT;
    case 9: *name = "c_bool"; return MPI_C_BOOL;
    default: *name = "int64_t"; return MPI_INT64_T;
    }
}


/* A random type of at most `depth` constructor levels, its description
 * appended to d.  The caller frees it. */
static MPI_Datatype make(int depth, char *d)
{
    MPI_Datatype t, old;
    const char *name;
    if (depth == 0 || rnd(4) == 0) {
        MPI_Type_dup(basic(&name), &t);
        add(d, "%s", name);
        return t;
    }
    /* the constructor's own arguments come first, then the old type */
    int rc = MPI_SUCCESS, kind = (int)rnd(11);
    char sub[DESC] = "";
    int c = 0, b = 0, n = 0, bl[4], di[4], nd = 0, order = MPI_ORDER_C;
    MPI_Aint s = 0, ad[4], lb = 0, ext = 0;
    int sizes[3], subs[3], starts[3], gs[3], dist[3], darg[3], ps[3], size = 1, rank = 0;
    const char *fname[3] = {"", "", ""};
    MPI_Datatype ft[3];
    switch (kind) {
    case 0: c = irnd(0, 3); break;
    case 1: c = irnd(0, 3); b = irnd(0, 2); s = irnd(-3, 3); break;
    case 2: c = irnd(0, 3); b = irnd(0, 2); s = irnd(-20, 20); break;
    case 3: n = irnd(0, 3); for (int i = 0; i < n; i++) { bl[i] = irnd(0, 2); di[i] = irnd(-3, 5); } break;
    case 4: n = irnd(0, 3); for (int i = 0; i < n; i++) { bl[i] = irnd(0, 2); ad[i] = irnd(-20, 40); } break;
    case 5: n = irnd(0, 3); b = irnd(0, 2); for (int i = 0; i < n; i++) di[i] = irnd(-3, 5); break;
    case 6: n = irnd(0, 3); b = irnd(0, 2); for (int i = 0; i < n; i++) ad[i] = irnd(-20, 40); break;
    case 7:
        n = irnd(1, 3);
        for (int i = 0; i < n; i++) {
            bl[i] = irnd(0, 2);
            ad[i] = irnd(-20, 40);
            if (i > 0) ft[i] = basic(&fname[i]);
        }
        break;
    case 8: lb = irnd(-10, 10); ext = irnd(0, 40); break;
    case 9:
        nd = irnd(1, 3);
        order = rnd(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        for (int i = 0; i < nd; i++) {
            sizes[i] = irnd(1, 4);
            subs[i] = irnd(1, sizes[i]);
            starts[i] = irnd(0, sizes[i] - subs[i]);
        }
        break;
    default:
        nd = irnd(1, 3);
        order = rnd(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        for (int i = 0; i < nd; i++) {
            gs[i] = irnd(1, 9);
            ps[i] = irnd(1, 3);
            int k = (int)rnd(3);
            dist[i] = k == 0 ? MPI_DISTRIBUTE_BLOCK : k == 1 ? MPI_DISTRIBUTE_CYCLIC : MPI_DISTRIBUTE_NONE;
            if (dist[i] == MPI_DISTRIBUTE_NONE) ps[i] = 1;
            darg[i] = MPI_DISTRIBUTE_DFLT_DARG;
            if (dist[i] == MPI_DISTRIBUTE_CYCLIC && rnd(2)) darg[i] = irnd(1, 3);
            if (dist[i] == MPI_DISTRIBUTE_BLOCK && rnd(2)) darg[i] = (gs[i] + ps[i] - 1) / ps[i] + irnd(0, 1);
            size *= ps[i];
        }
        rank = (int)rnd((unsigned)size);
        break;
    }
    old = make(depth - 1, sub);
    int old_size;
    MPI_Type_size(old, &old_size);
    if (old_size == 0) empty_part = 1;
    switch (kind) {
    case 0: rc = MPI_Type_contiguous(c, old, &t); add(d, "contig(%d,", c); break;
    case 1: rc = MPI_Type_vector(c, b, (int)s, old, &t); add(d, "vector(%d,%d,%ld,", c, b, (long)s); break;
    case 2: rc = MPI_Type_create_hvector(c, b, s, old, &t); add(d, "hvector(%d,%d,%ld,", c, b, (long)s); break;
    case 3:
        rc = MPI_Type_indexed(n, bl, di, old, &t);
        add(d, "indexed(");
        for (int i = 0; i < n; i++) add(d, "%d:%d ", bl[i], di[i]);
        add(d, ",");
        break;
    case 4:
        rc = MPI_Type_create_hindexed(n, bl, ad, old, &t);
        add(d, "hindexed(");
        for (int i = 0; i < n; i++) add(d, "%d:%ld ", bl[i], (long)ad[i]);
        add(d, ",");
        break;
    case 5:
        rc = MPI_Type_create_indexed_block(n, b, di, old, &t);
        add(d, "indexed_block(%d;", b);
        for (int i = 0; i < n; i++) add(d, "%d ", di[i]);
        add(d, ",");
        break;
    case 6:
        rc = MPI_Type_create_hindexed_block(n, b, ad, old, &t);
        add(d, "hindexed_block(%d;", b);
        for (int i = 0; i < n; i++) add(d, "%ld ", (long)ad[i]);
        add(d, ",");
        break;
    case 7:
        ft[0] = old;
        rc = MPI_Type_create_struct(n, bl, ad, ft, &t);
        add(d, "struct(");
        for (int i = 0; i < n; i++) add(d, "%d:%ld:%s ", bl[i], (long)ad[i], i == 0 ? "*" : fname[i]);
        add(d, ",");
        break;
    case 8: rc = MPI_Type_create_resized(old, lb, ext, &t); add(d, "resized(%ld,%ld,", (long)lb, (long)ext); break;
    case 9:
        rc = MPI_Type_create_subarray(nd, sizes, subs, starts, order, old, &t);
        add(d, "subarray(%s;", order == MPI_ORDER_C ? "C" : "F");
        for (int i = 0; i < nd; i++) add(d, "%d/%d@%d ", sizes[i], subs[i], starts[i]);
        add(d, ",");
        break;
    default:
        rc = MPI_Type_create_darray(size, rank, nd, gs, dist, darg, ps, order, old, &t);
        add(d, "darray(%d/%d,%s;", rank, size, order == MPI_ORDER_C ? "C" : "F");
        for (int i = 0; i < nd; i++)
            add(d, "%d:%s:%d:%d ", gs[i],
                dist[i] == MPI_DISTRIBUTE_BLOCK ? "block" : dist[i] == MPI_DISTRIBUTE_CYCLIC ? "cyclic" : "none",
                darg[i] == MPI_DISTRIBUTE_DFLT_DARG ? -1 : darg[i], ps[i]);
        add(d, ",");
        break;
    }
    add(d, "%s)", sub);
    MPI_Type_free(&old);
    if (rc != MPI_SUCCESS) {
        add(d, "=%s", error_class_name(rc));
        MPI_Type_dup(MPI_INT, &t);
    }
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (argc < 3) {
        fprintf(stderr, "usage: dtype_diff N SEED [START]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    setvbuf(stdout, NULL, _IOLBF, 0); /* a crash loses no finished line */
    const int n = atoi(argv[1]);
    const uint64_t seed = strtoull(argv[2], NULL, 10);
    const char *skip = getenv("SKIP");
    for (int it = argc > 3 ? atoi(argv[3]) : 0; it < n; it++) {
        char key[32];
        snprintf(key, sizeof key, ",%d,", it);
        if (skip != NULL && strstr(skip, key) != NULL) continue;
        state = seed * 1000003ULL + (uint64_t)it;
        rnd(2);
        empty_part = has_long_double = 0;
        char desc[DESC] = "";
        MPI_Datatype t = make(3, desc);
        MPI_Type_commit(&t);
        int size, count = irnd(1, 3), packed = 0;
        MPI_Aint lb, ext, tlb, text;
        MPI_Type_size(t, &size);
        MPI_Type_get_extent(t, &lb, &ext);
        MPI_Type_get_true_extent(t, &tlb, &text);
        if (size == 0) tlb = text = 0;
        /* the bytes count elements span */
        MPI_Aint lo = tlb, hi = tlb + text, last = tlb + (count - 1) * ext;
        if (last < lo) lo = last;
        if (last + text > hi) hi = last + text;
        uint64_t h = 1469598103934665603ULL; /* FNV-1a */
        if (size > 0 && hi - lo < (1 << 24)) {
            const size_t span = (size_t)(hi - lo);
            int room;
            MPI_Pack_size(count, t, MPI_COMM_WORLD, &room);
            unsigned char *mem = malloc(span + 1), *out = malloc((size_t)room + 1);
            for (size_t i = 0; i < span; i++) mem[i] = (unsigned char)(i * 131 + 7);
            char *base = (char *)mem - lo;
            if (MPI_Pack(base, count, t, out, room, &packed, MPI_COMM_WORLD) != MPI_SUCCESS) packed = -1;
            for (int i = 0; i < packed; i++) h = (h ^ out[i]) * 1099511628211ULL;
            memset(mem, 0, span);
            int pos = 0;
            if (packed > 0 && MPI_Unpack(out, packed, &pos, base, count, t, MPI_COMM_WORLD) != MPI_SUCCESS)
                packed = -2;
            for (size_t i = 0; i < span; i++) h = (h ^ mem[i]) * 1099511628211ULL;
            free(out);
            free(mem);
        }
        printf("%d %s | size %d lb %ld ext %ld tlb %ld text %ld count %d packed %d hash %016llx flags %s%s%s\n", it,
               desc, size, (long)lb, (long)ext, (long)tlb, (long)text, count, packed, (unsigned long long)h,
               empty_part ? "z" : "", has_long_double ? "l" : "", empty_part || has_long_double ? "" : "-");
        MPI_Type_free(&t);
    }
    MPI_Finalize();
    return 0;
}
