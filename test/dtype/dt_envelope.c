/* MPI_Type_get_envelope and MPI_Type_get_contents for every constructor:
 * the combiner and the arguments come back as given, and a type rebuilt
 * from its contents (recursively) packs exactly like the original.  Also
 * MPI_Type_dup, the _x queries, names, MPI_Get_address, MPI_Aint_add and
 * MPI_Aint_diff. */
#include "../mpi/check.h"

/* A type equivalent to `t`, built from its envelope and contents alone. */
static MPI_Datatype rebuild(MPI_Datatype t)
{
    int ni, na, nt, comb;
    CHECK_MPI(MPI_Type_get_envelope(t, &ni, &na, &nt, &comb));
    if (comb == MPI_COMBINER_NAMED)
        return t;
    int *ints = (int *)check_malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *aints = (MPI_Aint *)check_malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *types = (MPI_Datatype *)check_malloc(sizeof(MPI_Datatype) * (size_t)(nt + 1));
    CHECK_MPI(MPI_Type_get_contents(t, ni, na, nt, ints, aints, types));
    MPI_Datatype *olds = (MPI_Datatype *)check_malloc(sizeof(MPI_Datatype) * (size_t)(nt + 1));
    for (int i = 0; i < nt; ++i)
        olds[i] = rebuild(types[i]); /* named types come back as they are */
    MPI_Datatype out = MPI_DATATYPE_NULL;
    switch (comb) {
    case MPI_COMBINER_DUP: CHECK_MPI(MPI_Type_dup(olds[0], &out)); break;
    case MPI_COMBINER_CONTIGUOUS: CHECK_MPI(MPI_Type_contiguous(ints[0], olds[0], &out)); break;
    case MPI_COMBINER_VECTOR: CHECK_MPI(MPI_Type_vector(ints[0], ints[1], ints[2], olds[0], &out)); break;
    case MPI_COMBINER_HVECTOR: CHECK_MPI(MPI_Type_create_hvector(ints[0], ints[1], aints[0], olds[0], &out)); break;
    case MPI_COMBINER_INDEXED:
        CHECK_MPI(MPI_Type_indexed(ints[0], ints + 1, ints + 1 + ints[0], olds[0], &out));
        break;
    case MPI_COMBINER_HINDEXED: CHECK_MPI(MPI_Type_create_hindexed(ints[0], ints + 1, aints, olds[0], &out)); break;
    case MPI_COMBINER_INDEXED_BLOCK:
        CHECK_MPI(MPI_Type_create_indexed_block(ints[0], ints[1], ints + 2, olds[0], &out));
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        CHECK_MPI(MPI_Type_create_hindexed_block(ints[0], ints[1], aints, olds[0], &out));
        break;
    case MPI_COMBINER_STRUCT: CHECK_MPI(MPI_Type_create_struct(ints[0], ints + 1, aints, olds, &out)); break;
    case MPI_COMBINER_RESIZED: CHECK_MPI(MPI_Type_create_resized(olds[0], aints[0], aints[1], &out)); break;
    case MPI_COMBINER_SUBARRAY: {
        const int n = ints[0];
        CHECK_MPI(MPI_Type_create_subarray(n, ints + 1, ints + 1 + n, ints + 1 + 2 * n, ints[1 + 3 * n], olds[0],
                                           &out));
        break;
    }
    case MPI_COMBINER_DARRAY: {
        const int n = ints[2];
        CHECK_MPI(MPI_Type_create_darray(ints[0], ints[1], n, ints + 3, ints + 3 + n, ints + 3 + 2 * n,
                                         ints + 3 + 3 * n, ints[3 + 4 * n], olds[0], &out));
        break;
    }
    default: CHECKF(0, "unexpected combiner %d", comb);
    }
    /* The contents handed out handles to derived types: free them. */
    for (int i = 0; i < nt; ++i) {
        int a, b, c, k;
        CHECK_MPI(MPI_Type_get_envelope(types[i], &a, &b, &c, &k));
        if (k != MPI_COMBINER_NAMED) {
            CHECK_MPI(MPI_Type_free(&types[i]));
            CHECK_MPI(MPI_Type_free(&olds[i]));
        }
    }
    free(olds);
    free(types);
    free(aints);
    free(ints);
    return out;
}

/* `t` and its rebuilt twin have the same bounds and pack the same bytes. */
static void check_rebuild(MPI_Datatype t, int expect_combiner, const char *name)
{
    int ni, na, nt, comb;
    CHECK_MPI(MPI_Type_get_envelope(t, &ni, &na, &nt, &comb));
    CHECKF(comb == expect_combiner, "%s: combiner %d, expected %d", name, comb, expect_combiner);
    MPI_Datatype r = rebuild(t);
    CHECK_MPI(MPI_Type_commit(&r));
    MPI_Datatype tc = t;
    CHECK_MPI(MPI_Type_commit(&tc));
    MPI_Aint lb1, ex1, lb2, ex2, tl1, te1, tl2, te2;
    CHECK_MPI(MPI_Type_get_extent(t, &lb1, &ex1));
    CHECK_MPI(MPI_Type_get_extent(r, &lb2, &ex2));
    CHECK_MPI(MPI_Type_get_true_extent(t, &tl1, &te1));
    CHECK_MPI(MPI_Type_get_true_extent(r, &tl2, &te2));
    CHECKF(lb1 == lb2 && ex1 == ex2 && tl1 == tl2 && te1 == te2, "%s: rebuilt bounds differ", name);
    const int count = 3;
    const long lo = (tl1 < 0 ? tl1 : 0) + (ex1 < 0 ? 2 * ex1 : 0);
    const long hi = tl1 + te1 + (ex1 > 0 ? 2 * ex1 : 0);
    unsigned char *mem = (unsigned char *)check_malloc((size_t)(hi - lo + 1));
    pattern_fill(mem, (size_t)(hi - lo + 1), 3, 9);
    int psize = 0;
    CHECK_MPI(MPI_Pack_size(count, t, MPI_COMM_WORLD, &psize));
    char *a = (char *)check_malloc((size_t)psize + 1), *b = (char *)check_malloc((size_t)psize + 1);
    int pa = 0, pb = 0;
    CHECK_MPI(MPI_Pack(mem - lo, count, t, a, psize, &pa, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Pack(mem - lo, count, r, b, psize, &pb, MPI_COMM_WORLD));
    CHECKF(pa == pb && memcmp(a, b, (size_t)pa) == 0, "%s: the rebuilt type packs differently", name);
    CHECK_MPI(MPI_Type_free(&r));
    free(a);
    free(b);
    free(mem);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Datatype t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12;

    CHECK_MPI(MPI_Type_contiguous(3, MPI_DOUBLE, &t1));
    check_rebuild(t1, MPI_COMBINER_CONTIGUOUS, "contiguous");
    int ni, na, nt, comb, ints[16];
    MPI_Aint aints[4];
    MPI_Datatype types[4];
    CHECK_MPI(MPI_Type_get_envelope(t1, &ni, &na, &nt, &comb));
    CHECKF(ni == 1 && na == 0 && nt == 1, "contiguous envelope %d %d %d", ni, na, nt);
    CHECK_MPI(MPI_Type_get_contents(t1, 1, 0, 1, ints, aints, types));
    CHECKF(ints[0] == 3 && types[0] == MPI_DOUBLE, "contiguous contents %d", ints[0]);

    CHECK_MPI(MPI_Type_vector(4, 2, -3, t1, &t2));
    check_rebuild(t2, MPI_COMBINER_VECTOR, "vector");
    CHECK_MPI(MPI_Type_get_contents(t2, 3, 0, 1, ints, aints, types));
    CHECKF(ints[0] == 4 && ints[1] == 2 && ints[2] == -3, "vector contents");
    CHECK_MPI(MPI_Type_free(&types[0])); /* a derived type comes back as a new handle */

    CHECK_MPI(MPI_Type_create_hvector(3, 1, -40, MPI_INT, &t3));
    check_rebuild(t3, MPI_COMBINER_HVECTOR, "hvector");
    CHECK_MPI(MPI_Type_get_contents(t3, 2, 1, 1, ints, aints, types));
    CHECKF(ints[0] == 3 && ints[1] == 1 && aints[0] == -40 && types[0] == MPI_INT, "hvector contents");

    int bl[3] = {2, 0, 3}, di[3] = {4, 9, -2};
    MPI_Aint dh[3] = {48, 0, -24};
    CHECK_MPI(MPI_Type_indexed(3, bl, di, MPI_SHORT, &t4));
    check_rebuild(t4, MPI_COMBINER_INDEXED, "indexed");
    CHECK_MPI(MPI_Type_create_hindexed(3, bl, dh, t2, &t5));
    check_rebuild(t5, MPI_COMBINER_HINDEXED, "hindexed");
    CHECK_MPI(MPI_Type_create_indexed_block(3, 2, di, MPI_FLOAT, &t6));
    check_rebuild(t6, MPI_COMBINER_INDEXED_BLOCK, "indexed_block");
    CHECK_MPI(MPI_Type_create_hindexed_block(3, 2, dh, MPI_DOUBLE, &t7));
    check_rebuild(t7, MPI_COMBINER_HINDEXED_BLOCK, "hindexed_block");

    MPI_Datatype sty[3] = {t4, MPI_CHAR, t3};
    CHECK_MPI(MPI_Type_create_struct(3, bl, dh, sty, &t8));
    check_rebuild(t8, MPI_COMBINER_STRUCT, "struct");
    CHECK_MPI(MPI_Type_get_envelope(t8, &ni, &na, &nt, &comb));
    CHECKF(ni == 4 && na == 3 && nt == 3, "struct envelope %d %d %d", ni, na, nt);

    CHECK_MPI(MPI_Type_create_resized(t8, -16, 200, &t9));
    check_rebuild(t9, MPI_COMBINER_RESIZED, "resized");
    CHECK_MPI(MPI_Type_get_contents(t9, 0, 2, 1, ints, aints, types));
    CHECKF(aints[0] == -16 && aints[1] == 200, "resized contents %ld %ld", (long)aints[0], (long)aints[1]);
    CHECK_MPI(MPI_Type_free(&types[0]));

    int sizes[3] = {5, 4, 3}, sub[3] = {2, 3, 1}, st[3] = {1, 0, 2};
    CHECK_MPI(MPI_Type_create_subarray(3, sizes, sub, st, MPI_ORDER_FORTRAN, t1, &t10));
    check_rebuild(t10, MPI_COMBINER_SUBARRAY, "subarray");
    int gs[2] = {7, 5}, dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
        darg[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 2};
    CHECK_MPI(MPI_Type_create_darray(4, 1, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t11));
    check_rebuild(t11, MPI_COMBINER_DARRAY, "darray");
    CHECK_MPI(MPI_Type_dup(t5, &t12));
    check_rebuild(t12, MPI_COMBINER_DUP, "dup");

    /* Predefined types are named: no contents. */
    CHECK_MPI(MPI_Type_get_envelope(MPI_DOUBLE_INT, &ni, &na, &nt, &comb));
    CHECKF(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nt == 0, "MPI_DOUBLE_INT is named");

    /* The _x queries agree with the plain ones. */
    MPI_Count sx, lbx, exx, tlbx, texx;
    int s;
    MPI_Aint lb, ex, tlb, tex;
    CHECK_MPI(MPI_Type_size_x(t8, &sx));
    CHECK_MPI(MPI_Type_size(t8, &s));
    CHECK_MPI(MPI_Type_get_extent_x(t8, &lbx, &exx));
    CHECK_MPI(MPI_Type_get_extent(t8, &lb, &ex));
    CHECK_MPI(MPI_Type_get_true_extent_x(t8, &tlbx, &texx));
    CHECK_MPI(MPI_Type_get_true_extent(t8, &tlb, &tex));
    CHECK(sx == s && lbx == lb && exx == ex && tlbx == tlb && texx == tex);

    /* Names (MPI-3.1 6.8): a derived type has none until it is given one,
     * a duplicate does not inherit it, a predefined type has its MPI name
     * and may be renamed. */
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CHECK_MPI(MPI_Type_get_name(t8, name, &len));
    CHECKF(len == 0 && name[0] == '\0', "an unnamed type is called '%s' (%d)", name, len);
    CHECK_MPI(MPI_Type_set_name(t8, "my struct"));
    CHECK_MPI(MPI_Type_get_name(t8, name, &len));
    CHECKF(len == 9 && strcmp(name, "my struct") == 0, "name '%s'", name);
    MPI_Datatype t8dup;
    CHECK_MPI(MPI_Type_dup(t8, &t8dup));
    len = -1;
    CHECK_MPI(MPI_Type_get_name(t8dup, name, &len));
    CHECKF(len == 0, "a duplicate inherited the name '%s'", name);
    CHECK_MPI(MPI_Type_free(&t8dup));
    CHECK_MPI(MPI_Type_get_name(MPI_INT, name, &len));
    CHECKF(strcmp(name, "MPI_INT") == 0 && len == 7, "MPI_INT is called '%s'", name);
    /* A synonym has the name of the type it stands for (MPI-3.1 3.2.2:
     * MPI_LONG_LONG for MPI_LONG_LONG_INT, MPI_C_FLOAT_COMPLEX for
     * MPI_C_COMPLEX), as MPICH and Open MPI report it. */
    CHECK_MPI(MPI_Type_get_name(MPI_LONG_LONG, name, &len));
    CHECKF(strcmp(name, "MPI_LONG_LONG_INT") == 0 && len == 17, "MPI_LONG_LONG is called '%s'", name);
    CHECK_MPI(MPI_Type_get_name(MPI_C_FLOAT_COMPLEX, name, &len));
    CHECKF(strcmp(name, "MPI_C_COMPLEX") == 0 && len == 13, "MPI_C_FLOAT_COMPLEX is called '%s'", name);
    CHECK_MPI(MPI_Type_set_name(MPI_SHORT, "my short"));
    CHECK_MPI(MPI_Type_get_name(MPI_SHORT, name, &len));
    CHECKF(strcmp(name, "my short") == 0 && len == 8, "renamed MPI_SHORT is called '%s'", name);
    CHECK_MPI(MPI_Type_set_name(MPI_SHORT, "MPI_SHORT"));
    /* Fortran's CHARACTER (MPI-3.1 3.2.2, usable from C): one byte, named,
     * predefined. */
    int csize = 0;
    CHECK_MPI(MPI_Type_size(MPI_CHARACTER, &csize));
    CHECKF(csize == 1, "MPI_CHARACTER has size %d", csize);
    CHECK_MPI(MPI_Type_get_name(MPI_CHARACTER, name, &len));
    CHECKF(strcmp(name, "MPI_CHARACTER") == 0, "MPI_CHARACTER is called '%s'", name);
    CHECK_MPI(MPI_Type_get_envelope(MPI_CHARACTER, &ni, &na, &nt, &comb));
    CHECK(comb == MPI_COMBINER_NAMED);
    char port[MPI_MAX_PORT_NAME]; /* the constant exists, for code that declares port buffers */
    CHECK(sizeof port >= 64);

    /* Addresses. */
    double arr[10];
    MPI_Aint a0, a7;
    CHECK_MPI(MPI_Get_address(&arr[0], &a0));
    CHECK_MPI(MPI_Get_address(&arr[7], &a7));
    CHECK(MPI_Aint_diff(a7, a0) == 7 * (MPI_Aint)sizeof(double));
    CHECK(MPI_Aint_add(a0, 7 * sizeof(double)) == a7);

    MPI_Datatype all[] = {t12, t11, t10, t9, t8, t7, t6, t5, t4, t3, t2, t1};
    for (unsigned i = 0; i < sizeof all / sizeof all[0]; ++i)
        CHECK_MPI(MPI_Type_free(&all[i]));
    MPI_Finalize();
    return 0;
}
