/* Seed 003, example 3.22: MPI_Type_vector(3, 1, -2, type1) has the map
 * {(double, 0), (char, 8), (double, -32), (char, -24), (double, -64), (char, -56)}:
 * a negative stride walks backwards; lb -64, extent 80. */
#include "typemap.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Datatype type1 = tm_type1();
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_vector(3, 1, -2, type1, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    tm_check_bounds(t, 27, -64, 80, -64, 73, "vector(3, 1, -2, type1)");
    const struct tm_entry map[] = {{0, 8}, {8, 1}, {-32, 8}, {-24, 1}, {-64, 8}, {-56, 1}};
    tm_exchange(t, map, 6, 80, 1, "example 3.22, count 1");
    tm_exchange(t, map, 6, 80, 4, "example 3.22, count 4");
    /* Free the old type first: the vector keeps it alive. */
    CHECK_MPI(MPI_Type_free(&type1));
    tm_exchange(t, map, 6, 80, 2, "example 3.22 after freeing type1");
    CHECK_MPI(MPI_Type_free(&t));
    MPI_Finalize();
    return 0;
}
