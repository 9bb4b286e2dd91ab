/* Seed 003, example 3.23: MPI_Type_indexed(2, B = (3, 1), D = (4, 0), type1)
 * has three copies of type1 from displacement 64, then one at 0. */
#include "typemap.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Datatype type1 = tm_type1();
    int B[2] = {3, 1};
    int D[2] = {4, 0};
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_indexed(2, B, D, type1, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    tm_check_bounds(t, 36, 0, 112, 0, 105, "indexed(2, (3, 1), (4, 0), type1)");
    const struct tm_entry map[] = {{64, 8}, {72, 1}, {80, 8}, {88, 1}, {96, 8}, {104, 1}, {0, 8}, {8, 1}};
    tm_exchange(t, map, 8, 112, 1, "example 3.23, count 1");
    tm_exchange(t, map, 8, 112, 3, "example 3.23, count 3");
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_MPI(MPI_Type_free(&type1));
    MPI_Finalize();
    return 0;
}
