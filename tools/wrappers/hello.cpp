// hello.cpp: the smallest C++ MPI program, compiled by the wrappers' test.
#include <mpi.h>

#include <iostream>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = -1;
    int size = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::cout << "hello from C++, rank " << rank << " of " << size << '\n';
    MPI_Finalize();
    return 0;
}
