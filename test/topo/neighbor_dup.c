/*
 * neighbor.c on the topologies with repeated edges only: Cartesian grids
 * with a periodic dimension of one or two processes, where a process is
 * both neighbours of another along a dimension (or its own): the block sent
 * down dimension d must arrive in the receiver's block for the neighbour
 * above, and the other way round (MPI-4.0 errata to MPI-3.1 7.6,
 * mpi-forum/mpi-issues#153); and graphs with self loops and repeated
 * edges, where a pair's messages fill its blocks in order.  Standard MPI,
 * but marked shmpi-only in meson.build: Debian's MPICH 4.0 predates the
 * fixes.
 */
#define NEIGHBOR_DEGENERATE 1
#include "neighbor.c"
