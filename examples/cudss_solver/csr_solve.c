/* csr_solve: see csr_solve.h. Every CUDA and cuDSS status is checked; the first failure is reported. */
#define _POSIX_C_SOURCE 200809L
#include "csr_solve.h"

#include <stdio.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <cudss.h>

static const char *cudss_status_name(cudssStatus_t status)
{
    switch (status) {
    case CUDSS_STATUS_SUCCESS: return "CUDSS_STATUS_SUCCESS";
    case CUDSS_STATUS_NOT_INITIALIZED: return "CUDSS_STATUS_NOT_INITIALIZED";
    case CUDSS_STATUS_ALLOC_FAILED: return "CUDSS_STATUS_ALLOC_FAILED";
    case CUDSS_STATUS_INVALID_VALUE: return "CUDSS_STATUS_INVALID_VALUE";
    case CUDSS_STATUS_NOT_SUPPORTED: return "CUDSS_STATUS_NOT_SUPPORTED";
    case CUDSS_STATUS_EXECUTION_FAILED: return "CUDSS_STATUS_EXECUTION_FAILED";
    case CUDSS_STATUS_INTERNAL_ERROR: return "CUDSS_STATUS_INTERNAL_ERROR";
    case CUDSS_STATUS_IR_FAILED: return "CUDSS_STATUS_IR_FAILED";
    }
    return "CUDSS_STATUS_UNKNOWN";
}

#define CHECK_CUDA(call)                                                                          \
    do {                                                                                          \
        cudaError_t status_ = (call);                                                             \
        if (status_ != cudaSuccess) {                                                             \
            snprintf(err, CSR_SOLVE_ERROR_SIZE, "%s failed: %s (%s)", #call,                      \
                     cudaGetErrorName(status_), cudaGetErrorString(status_));                     \
            goto fail;                                                                            \
        }                                                                                         \
    } while (0)

#define CHECK_CUDSS(call)                                                                         \
    do {                                                                                          \
        cudssStatus_t status_ = (call);                                                           \
        if (status_ != CUDSS_STATUS_SUCCESS) {                                                    \
            snprintf(err, CSR_SOLVE_ERROR_SIZE, "%s failed: %s", #call, cudss_status_name(status_)); \
            goto fail;                                                                            \
        }                                                                                         \
    } while (0)

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int csr_solve(const CsrSolveArgs *args, CsrSolveTimes *times, char err[CSR_SOLVE_ERROR_SIZE])
{
    static const cudssMatrixType_t types[] = {CUDSS_MTYPE_GENERAL, CUDSS_MTYPE_SYMMETRIC, CUDSS_MTYPE_SPD};
    static const cudssMatrixViewType_t views[] = {CUDSS_MVIEW_FULL, CUDSS_MVIEW_UPPER, CUDSS_MVIEW_LOWER};
    const cudaDataType_t value_type = args->value_type == CSR_VALUES_FLOAT32 ? CUDA_R_32F : CUDA_R_64F;
    const cudaStream_t stream = (cudaStream_t)args->stream;
    cudssHandle_t handle = NULL;
    cudssConfig_t config = NULL;
    cudssData_t data = NULL;
    cudssMatrix_t matrix = NULL, solution = NULL, rhs = NULL;
    int previous_device = -1, info = 0, ok = -1;
    size_t written = 0;
    double t;

    err[0] = '\0';
    CHECK_CUDA(cudaGetDevice(&previous_device));
    /* The caller's current device may be another: cuDSS allocates on the current one. */
    CHECK_CUDA(cudaSetDevice(args->device));
    CHECK_CUDSS(cudssCreate(&handle));
    CHECK_CUDSS(cudssSetStream(handle, stream));
    if (args->threading_layer != NULL) {
        CHECK_CUDSS(cudssSetThreadingLayer(handle, args->threading_layer[0] ? args->threading_layer : NULL));
    }
    CHECK_CUDSS(cudssConfigCreate(&config));
    if (args->threading_layer != NULL && args->host_threads > 0) {
        int threads = args->host_threads;
        CHECK_CUDSS(cudssConfigSet(config, CUDSS_CONFIG_HOST_NTHREADS, &threads, sizeof(threads)));
    }
    CHECK_CUDSS(cudssDataCreate(handle, &data));
    CHECK_CUDSS(cudssMatrixCreateCsr(&matrix, args->rows, args->rows, args->nnz, (void *)args->row_start,
                                     NULL, (void *)args->columns, (void *)args->values, CUDA_R_32I,
                                     CUDA_R_32I, value_type, types[args->matrix_type], views[args->view],
                                     CUDSS_BASE_ZERO));
    CHECK_CUDSS(cudssMatrixCreateDn(&rhs, args->rows, args->nrhs, args->rows, (void *)args->b, value_type,
                                    CUDSS_LAYOUT_COL_MAJOR));
    CHECK_CUDSS(cudssMatrixCreateDn(&solution, args->rows, args->nrhs, args->rows, args->x, value_type,
                                    CUDSS_LAYOUT_COL_MAJOR));

    /* Each phase is timed to the end of its work on the stream (the analysis runs mostly on the host). */
    t = now_seconds();
    CHECK_CUDSS(cudssExecute(handle, CUDSS_PHASE_ANALYSIS, config, data, matrix, solution, rhs));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    times->analysis = now_seconds() - t;

    t = now_seconds();
    CHECK_CUDSS(cudssExecute(handle, CUDSS_PHASE_FACTORIZATION, config, data, matrix, solution, rhs));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    times->factorization = now_seconds() - t;

    CHECK_CUDSS(cudssDataGet(handle, data, CUDSS_DATA_INFO, &info, sizeof(info), &written));
    if (info != 0) {
        snprintf(err, CSR_SOLVE_ERROR_SIZE,
                 "cuDSS factorization reported CUDSS_DATA_INFO = %d (a zero or, for spd, a non-positive "
                 "pivot)", info);
        goto fail;
    }
    times->lu_nnz = 0;
    CHECK_CUDSS(cudssDataGet(handle, data, CUDSS_DATA_LU_NNZ, &times->lu_nnz, sizeof(times->lu_nnz), &written));

    t = now_seconds();
    CHECK_CUDSS(cudssExecute(handle, CUDSS_PHASE_SOLVE, config, data, matrix, solution, rhs));
    /* Also what makes freeing cuDSS's buffers below safe while the stream is the caller's. */
    CHECK_CUDA(cudaStreamSynchronize(stream));
    times->solve = now_seconds() - t;
    ok = 0;

fail:
    /* Cleanup keeps the first error: later failures here are not reported over it. */
    if (matrix) cudssMatrixDestroy(matrix);
    if (rhs) cudssMatrixDestroy(rhs);
    if (solution) cudssMatrixDestroy(solution);
    if (data) cudssDataDestroy(handle, data);
    if (config) cudssConfigDestroy(config);
    if (handle) cudssDestroy(handle);
    if (previous_device >= 0) cudaSetDevice(previous_device);
    return ok;
}
