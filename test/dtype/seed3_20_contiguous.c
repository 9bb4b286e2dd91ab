/* Seed 003, example 3.20: MPI_Type_contiguous(3, type1) with type1 =
 * {(double, 0), (char, 8)} of extent 16 has the map
 * {(double, 0), (char, 8), (double, 16), (char, 24), (double, 32), (char, 40)}. */
#include "typemap.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Datatype type1 = tm_type1();
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_contiguous(3, type1, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    tm_check_bounds(type1, 9, 0, 16, 0, 9, "type1");
    tm_check_bounds(t, 27, 0, 48, 0, 41, "contiguous(3, type1)");
    const struct tm_entry map[] = {{0, 8}, {8, 1}, {16, 8}, {24, 1}, {32, 8}, {40, 1}};
    tm_exchange(t, map, 6, 48, 1, "example 3.20, count 1");
    tm_exchange(t, map, 6, 48, 3, "example 3.20, count 3");
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_MPI(MPI_Type_free(&type1));
    CHECK(t == MPI_DATATYPE_NULL && type1 == MPI_DATATYPE_NULL);
    MPI_Finalize();
    return 0;
}
