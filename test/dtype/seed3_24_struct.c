/* Seed 003, example 3.24: a struct of B = (2, 1, 3) copies of
 * T = (MPI_FLOAT, type1, MPI_CHAR) at D = (0, 16, 26) has the map
 * {(float, 0), (float, 4), (double, 16), (char, 24), (char, 26), (char, 27), (char, 28)}.
 * Its extent is 32: the data ends at 29 and the double aligns the extent to
 * 8, as in the equivalent C struct.  Also the seed's equivalence: hindexed
 * with an old type equals the struct with that type in every block. */
#include "typemap.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Datatype type1 = tm_type1();
    int B[3] = {2, 1, 3};
    MPI_Aint D[3] = {0, 16, 26};
    MPI_Datatype T[3] = {MPI_FLOAT, type1, MPI_CHAR};
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_create_struct(3, B, D, T, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    tm_check_bounds(t, 20, 0, 32, 0, 29, "struct example 3.24");
    const struct tm_entry map[] = {{0, 4}, {4, 4}, {16, 8}, {24, 1}, {26, 1}, {27, 1}, {28, 1}};
    tm_exchange(t, map, 7, 32, 1, "example 3.24, count 1");
    tm_exchange(t, map, 7, 32, 5, "example 3.24, count 5");

    /* MPI_Type_create_hindexed(3, B, D', type1) == struct of type1 everywhere. */
    MPI_Aint D2[3] = {0, 40, 64};
    MPI_Datatype T2[3] = {type1, type1, type1};
    MPI_Datatype h, s;
    CHECK_MPI(MPI_Type_create_hindexed(3, B, D2, type1, &h));
    CHECK_MPI(MPI_Type_create_struct(3, B, D2, T2, &s));
    CHECK_MPI(MPI_Type_commit(&h));
    CHECK_MPI(MPI_Type_commit(&s));
    const struct tm_entry hmap[] = {{0, 8}, {8, 1}, {16, 8}, {24, 1}, {40, 8}, {48, 1},
                                    {64, 8}, {72, 1}, {80, 8}, {88, 1}, {96, 8}, {104, 1}};
    tm_check_bounds(h, 54, 0, 112, 0, 105, "hindexed of type1");
    tm_check_bounds(s, 54, 0, 112, 0, 105, "struct of type1");
    tm_exchange(h, hmap, 12, 112, 2, "hindexed of type1");
    tm_exchange(s, hmap, 12, 112, 2, "struct of type1");

    CHECK_MPI(MPI_Type_free(&s));
    CHECK_MPI(MPI_Type_free(&h));
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_MPI(MPI_Type_free(&type1));
    MPI_Finalize();
    return 0;
}
