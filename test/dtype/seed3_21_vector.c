/* Seed 003, example 3.21: MPI_Type_vector(2, 3, 4, type1) has two blocks of
 * three copies of type1, four extents (64 bytes) apart. */
#include "typemap.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Datatype type1 = tm_type1();
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_vector(2, 3, 4, type1, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    tm_check_bounds(t, 54, 0, 112, 0, 105, "vector(2, 3, 4, type1)");
    const struct tm_entry map[] = {{0, 8},  {8, 1},  {16, 8}, {24, 1}, {32, 8}, {40, 1},
                                   {64, 8}, {72, 1}, {80, 8}, {88, 1}, {96, 8}, {104, 1}};
    tm_exchange(t, map, 12, 112, 1, "example 3.21, count 1");
    tm_exchange(t, map, 12, 112, 2, "example 3.21, count 2");
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_MPI(MPI_Type_free(&type1));
    MPI_Finalize();
    return 0;
}
