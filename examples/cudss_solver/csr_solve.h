/*
 * csr_solve: one sparse solve with cuDSS on data that is on the GPU already (device pointers), on a
 * given CUDA stream. Plain C with no Python and no torch in it: the torch extension (cudss_torch.cpp)
 * calls it on a tensor's storage, and a build on another machine can compile it as it is.
 */
#ifndef CUDSS_SOLVER_CSR_SOLVE_H
#define CUDSS_SOLVER_CSR_SOLVE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CSR_SOLVE_ERROR_SIZE 512

typedef enum { CSR_VALUES_FLOAT64 = 0, CSR_VALUES_FLOAT32 = 1 } CsrValueType;
/* cuDSS's matrix types and views, spelled without its header (cudss_torch.cpp does not include it). */
typedef enum { CSR_GENERAL = 0, CSR_SYMMETRIC = 1, CSR_SPD = 2 } CsrMatrixType;
typedef enum { CSR_VIEW_FULL = 0, CSR_VIEW_UPPER = 1, CSR_VIEW_LOWER = 2 } CsrView;

typedef struct {
    int device;               /* the CUDA device every pointer below lives on */
    void *stream;             /* cudaStream_t: the work is queued there (NULL: the legacy stream) */
    int64_t rows;             /* square: rows x rows */
    int64_t nnz;              /* stored entries */
    int64_t nrhs;             /* right-hand sides, column-major with leading dimension rows */
    const int32_t *row_start; /* rows + 1, zero-based */
    const int32_t *columns;   /* nnz */
    const void *values;       /* nnz, of value_type */
    const void *b;            /* rows x nrhs, of value_type */
    void *x;                  /* rows x nrhs, of value_type: written */
    CsrValueType value_type;
    CsrMatrixType matrix_type;
    CsrView view;
    /* cuDSS's host threading layer for the reordering: NULL leaves it off; "" lets cuDSS read
     * CUDSS_THREADING_LIB; otherwise the path of libcudss_mtlayer_*.so. */
    const char *threading_layer;
    int host_threads;         /* CUDSS_CONFIG_HOST_NTHREADS when > 0 and a threading layer is set */
} CsrSolveArgs;

typedef struct {
    double analysis, factorization, solve; /* seconds, each phase ended by a stream synchronization */
    int64_t lu_nnz;                        /* entries in the factors */
} CsrSolveTimes;

/* Runs ANALYSIS, FACTORIZATION and SOLVE on args->stream and waits for the stream before it frees
 * cuDSS's objects. Returns 0, or -1 with a message naming the failed call in err. */
int csr_solve(const CsrSolveArgs *args, CsrSolveTimes *times, char err[CSR_SOLVE_ERROR_SIZE]);

#ifdef __cplusplus
}
#endif

#endif
