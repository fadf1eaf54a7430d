/*
 * mpi_alltoall: MPI_Alltoall timed as bench/psel_alltoall times protosel's
 * ("isolated": the median of alltoalls that each start after a barrier,
 * the largest over the ranks). Built by bench/alltoall.sh with mpicc, run
 * with Open MPI's UCX PML: stock UCP's data path, a reference beside
 * protosel's. Not part of the build (it needs MPI).
 *
 * Usage: mpirun -np P mpi_alltoall size,size,...
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double*)x, b = *(const double*)y;

    return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
    double t[1000], median, worst;
    int rank, procs, iters, i;
    char *sizes, *tok, *save = NULL;
    size_t n;
    char *sbuf, *rbuf;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &procs);
    sizes = strdup((argc > 1) ? argv[1] : "8");
    if (rank == 0) {
        printf("# mpi_alltoall: %d processes; median of alltoalls each "
               "after a barrier, the largest over the ranks\n#%9s %7s "
               "%14s\n", procs, "n [B]", "iters", "isolated [us]");
    }
    for (tok = strtok_r(sizes, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        n     = strtoull(tok, NULL, 10);
        iters = (n <= 4096) ? 1000 : (n <= 65536) ? 200 : 40;
        sbuf  = malloc((n * procs) + 1);
        rbuf  = malloc((n * procs) + 1);
        memset(sbuf, rank, (n * procs) + 1);
        for (i = 0; i < (iters / 10) + 1; ++i) {
            MPI_Alltoall(sbuf, (int)n, MPI_BYTE, rbuf, (int)n, MPI_BYTE,
                         MPI_COMM_WORLD);
        }
        for (i = 0; i < iters; ++i) {
            MPI_Barrier(MPI_COMM_WORLD);
            t[i] = MPI_Wtime();
            MPI_Alltoall(sbuf, (int)n, MPI_BYTE, rbuf, (int)n, MPI_BYTE,
                         MPI_COMM_WORLD);
            t[i] = MPI_Wtime() - t[i];
        }
        qsort(t, iters, sizeof(t[0]), cmp_double);
        median = t[iters / 2];
        MPI_Reduce(&median, &worst, 1, MPI_DOUBLE, MPI_MAX, 0,
                   MPI_COMM_WORLD);
        if (rank == 0) {
            printf("%10zu %7d %14.3f\n", n, iters, worst * 1e6);
            fflush(stdout);
        }
        free(sbuf);
        free(rbuf);
    }
    free(sizes);
    MPI_Finalize();
    return 0;
}
