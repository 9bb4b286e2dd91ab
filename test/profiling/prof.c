/* prof.c: a small profiling library in the style of mpiP, written against
 * the MPI standard's profiling interface only (MPI-3.1 section 14.2).
 *
 * It defines MPI_Send, MPI_Reduce and MPI_Finalize; each counts the call and
 * hands it to the PMPI_ entry point of whatever MPI the program runs on.
 * MPI_Finalize prints one line per rank:
 *     prof: rank R: MPI_Send N calls B bytes, MPI_Reduce M calls
 * and then finalizes.  Built as a shared library with the MPI's own mpicc;
 * a program uses it by linking it before the MPI library (-lprof) or by
 * LD_PRELOAD.  test/profiling/run-profiling.sh checks the counts. */
#include <mpi.h>
#include <stdio.h>

static long send_calls;
static long long send_bytes;
static long reduce_calls;

int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
             MPI_Comm comm) {
    int size = 0;
    ++send_calls;
    if (PMPI_Type_size(datatype, &size) == MPI_SUCCESS) send_bytes += (long long)count * size;
    return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm) {
    ++reduce_calls;
    return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

int MPI_Finalize(void) {
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("prof: rank %d: MPI_Send %ld calls %lld bytes, MPI_Reduce %ld calls\n", rank,
           send_calls, send_bytes, reduce_calls);
    fflush(stdout);
    return PMPI_Finalize();
}
