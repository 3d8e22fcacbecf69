/*
 * cudss_solver._cudss_solver: a small CPython extension (limited API, abi3) that links against
 * NVIDIA's cuDSS and CUDA runtime pip wheels (libcudss.so.1, libcudart.so.13).
 *
 *   cudss_version() -> (major, minor, patch)      cudssGetProperty; needs no GPU
 *   cuda_runtime_version() -> int                 cudaRuntimeGetVersion; needs no GPU
 *   solve_poisson3d(n) -> dict                    builds the 7-point 3D Poisson matrix of n^3
 *                                                 unknowns (SPD, upper triangle in CSR), solves
 *                                                 A x = A * ones with cuDSS on the GPU, and
 *                                                 returns per-phase timings and the residual
 *
 * Every CUDA and cuDSS status is checked; a failure raises RuntimeError naming the call and the
 * status. The GPU work runs with the GIL released.
 */
#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <cudss.h>

#define ERROR_SIZE 512
#define MAX_N 800 /* n^3 rows and ~4 n^3 stored entries must fit in 32-bit indices */

static const char *status_name_of_cudss(cudssStatus_t status)
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

/* Jump to `fail` with a message when a call does not succeed. `err` is the caller's buffer. */
#define CHECK_CUDA(call)                                                                          \
    do {                                                                                          \
        cudaError_t status_ = (call);                                                             \
        if (status_ != cudaSuccess) {                                                             \
            snprintf(err, ERROR_SIZE, "%s failed: %s (%s)", #call, cudaGetErrorName(status_),     \
                     cudaGetErrorString(status_));                                                \
            goto fail;                                                                            \
        }                                                                                         \
    } while (0)

#define CHECK_CUDSS(call)                                                                         \
    do {                                                                                          \
        cudssStatus_t status_ = (call);                                                           \
        if (status_ != CUDSS_STATUS_SUCCESS) {                                                    \
            snprintf(err, ERROR_SIZE, "%s failed: %s", #call, status_name_of_cudss(status_));        \
            goto fail;                                                                            \
        }                                                                                         \
    } while (0)

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- the matrix ------------------------------------------------------------------------------ */

typedef struct {
    int32_t rows;
    int32_t nnz;
    int32_t *row_start; /* rows + 1 */
    int32_t *columns;   /* nnz */
    double *values;     /* nnz */
} UpperCsr;

static void csr_free(UpperCsr *a)
{
    free(a->row_start);
    free(a->columns);
    free(a->values);
    memset(a, 0, sizeof(*a));
}

/* The upper triangle (diagonal included) of the 7-point Laplacian on an n x n x n grid with
 * Dirichlet boundaries: 6 on the diagonal, -1 to each neighbour. Rows are numbered x fastest. */
static int poisson3d_upper(int n, UpperCsr *a)
{
    const int64_t n2 = (int64_t)n * n;
    const int64_t rows = n2 * n;
    const int64_t nnz = rows + 3 * n2 * (n - 1);
    a->rows = (int32_t)rows;
    a->nnz = (int32_t)nnz;
    a->row_start = malloc(sizeof(int32_t) * (size_t)(rows + 1));
    a->columns = malloc(sizeof(int32_t) * (size_t)nnz);
    a->values = malloc(sizeof(double) * (size_t)nnz);
    if (!a->row_start || !a->columns || !a->values) {
        csr_free(a);
        return -1;
    }
    int32_t k = 0;
    for (int z = 0; z < n; ++z) {
        for (int y = 0; y < n; ++y) {
            for (int x = 0; x < n; ++x) {
                const int32_t row = (int32_t)(x + (int64_t)n * y + n2 * z);
                a->row_start[row] = k;
                a->columns[k] = row;
                a->values[k++] = 6.0;
                if (x + 1 < n) {
                    a->columns[k] = row + 1;
                    a->values[k++] = -1.0;
                }
                if (y + 1 < n) {
                    a->columns[k] = row + n;
                    a->values[k++] = -1.0;
                }
                if (z + 1 < n) {
                    a->columns[k] = (int32_t)(row + n2);
                    a->values[k++] = -1.0;
                }
            }
        }
    }
    a->row_start[rows] = k;
    return k == a->nnz ? 0 : -1;
}

/* y = A x for the symmetric A whose upper triangle `a` holds. */
static void symmetric_multiply(const UpperCsr *a, const double *x, double *y)
{
    memset(y, 0, sizeof(double) * (size_t)a->rows);
    for (int32_t i = 0; i < a->rows; ++i) {
        for (int32_t k = a->row_start[i]; k < a->row_start[i + 1]; ++k) {
            const int32_t j = a->columns[k];
            y[i] += a->values[k] * x[j];
            if (j != i) {
                y[j] += a->values[k] * x[i];
            }
        }
    }
}

static double norm2(const double *v, int32_t size)
{
    double sum = 0.0;
    for (int32_t i = 0; i < size; ++i) {
        sum += v[i] * v[i];
    }
    return sqrt(sum);
}

/* ---- the solve --------------------------------------------------------------------------------- */

typedef struct {
    int n;
    int32_t rows;
    int32_t nnz;
    int64_t lu_nnz;
    int runtime_version;
    int driver_version;
    double t_build, t_context, t_upload, t_analysis, t_factorization, t_solve, t_download, t_residual;
    double residual;  /* ||b - A x|| / ||b|| */
    double max_error; /* max |x_i - 1| (the exact solution is all ones) */
} SolveResult;

static int solve(int n, SolveResult *r, char *err)
{
    UpperCsr a = {0};
    double *ones = NULL, *b = NULL, *x = NULL, *ax = NULL;
    int32_t *d_row_start = NULL, *d_columns = NULL;
    double *d_values = NULL, *d_b = NULL, *d_x = NULL;
    cudssHandle_t handle = NULL;
    cudssConfig_t config = NULL;
    cudssData_t data = NULL;
    cudssMatrix_t matrix = NULL, solution = NULL, rhs = NULL;
    int ok = -1;
    double t;

    r->n = n;
    CHECK_CUDA(cudaRuntimeGetVersion(&r->runtime_version));
    CHECK_CUDA(cudaDriverGetVersion(&r->driver_version));

    t = now_seconds();
    if (poisson3d_upper(n, &a) != 0) {
        snprintf(err, ERROR_SIZE, "out of host memory building the %d^3 Poisson matrix", n);
        goto fail;
    }
    const int32_t rows = a.rows;
    r->rows = rows;
    r->nnz = a.nnz;
    ones = malloc(sizeof(double) * (size_t)rows);
    b = malloc(sizeof(double) * (size_t)rows);
    x = malloc(sizeof(double) * (size_t)rows);
    ax = malloc(sizeof(double) * (size_t)rows);
    if (!ones || !b || !x || !ax) {
        snprintf(err, ERROR_SIZE, "out of host memory for vectors of %d doubles", rows);
        goto fail;
    }
    for (int32_t i = 0; i < rows; ++i) {
        ones[i] = 1.0;
    }
    symmetric_multiply(&a, ones, b); /* b = A * ones, so x = ones exactly */
    r->t_build = now_seconds() - t;

    t = now_seconds();
    CHECK_CUDA(cudaFree(NULL)); /* creates the context: kept out of the phases below */
    CHECK_CUDSS(cudssCreate(&handle));
    CHECK_CUDSS(cudssConfigCreate(&config));
    CHECK_CUDSS(cudssDataCreate(handle, &data));
    r->t_context = now_seconds() - t;

    t = now_seconds();
    CHECK_CUDA(cudaMalloc((void **)&d_row_start, sizeof(int32_t) * ((size_t)rows + 1)));
    CHECK_CUDA(cudaMalloc((void **)&d_columns, sizeof(int32_t) * (size_t)a.nnz));
    CHECK_CUDA(cudaMalloc((void **)&d_values, sizeof(double) * (size_t)a.nnz));
    CHECK_CUDA(cudaMalloc((void **)&d_b, sizeof(double) * (size_t)rows));
    CHECK_CUDA(cudaMalloc((void **)&d_x, sizeof(double) * (size_t)rows));
    CHECK_CUDA(cudaMemcpy(d_row_start, a.row_start, sizeof(int32_t) * ((size_t)rows + 1),
                          cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_columns, a.columns, sizeof(int32_t) * (size_t)a.nnz, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_values, a.values, sizeof(double) * (size_t)a.nnz, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_b, b, sizeof(double) * (size_t)rows, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemset(d_x, 0, sizeof(double) * (size_t)rows));
    CHECK_CUDSS(cudssMatrixCreateCsr(&matrix, rows, rows, a.nnz, d_row_start, NULL, d_columns, d_values,
                                     CUDA_R_32I, CUDA_R_32I, CUDA_R_64F, CUDSS_MTYPE_SPD,
                                     CUDSS_MVIEW_UPPER, CUDSS_BASE_ZERO));
    CHECK_CUDSS(cudssMatrixCreateDn(&rhs, rows, 1, rows, d_b, CUDA_R_64F, CUDSS_LAYOUT_COL_MAJOR));
    CHECK_CUDSS(cudssMatrixCreateDn(&solution, rows, 1, rows, d_x, CUDA_R_64F, CUDSS_LAYOUT_COL_MAJOR));
    CHECK_CUDA(cudaDeviceSynchronize());
    r->t_upload = now_seconds() - t;

    t = now_seconds();
    CHECK_CUDSS(cudssExecute(handle, CUDSS_PHASE_ANALYSIS, config, data, matrix, solution, rhs));
    CHECK_CUDA(cudaDeviceSynchronize());
    r->t_analysis = now_seconds() - t;

    t = now_seconds();
    CHECK_CUDSS(cudssExecute(handle, CUDSS_PHASE_FACTORIZATION, config, data, matrix, solution, rhs));
    CHECK_CUDA(cudaDeviceSynchronize());
    r->t_factorization = now_seconds() - t;

    int info = 0;
    size_t written = 0;
    CHECK_CUDSS(cudssDataGet(handle, data, CUDSS_DATA_INFO, &info, sizeof(info), &written));
    if (info != 0) {
        snprintf(err, ERROR_SIZE, "cuDSS factorization reported CUDSS_DATA_INFO = %d", info);
        goto fail;
    }
    r->lu_nnz = 0;
    CHECK_CUDSS(cudssDataGet(handle, data, CUDSS_DATA_LU_NNZ, &r->lu_nnz, sizeof(r->lu_nnz), &written));

    t = now_seconds();
    CHECK_CUDSS(cudssExecute(handle, CUDSS_PHASE_SOLVE, config, data, matrix, solution, rhs));
    CHECK_CUDA(cudaDeviceSynchronize());
    r->t_solve = now_seconds() - t;

    t = now_seconds();
    CHECK_CUDA(cudaMemcpy(x, d_x, sizeof(double) * (size_t)rows, cudaMemcpyDeviceToHost));
    r->t_download = now_seconds() - t;

    t = now_seconds();
    symmetric_multiply(&a, x, ax);
    double max_error = 0.0;
    for (int32_t i = 0; i < rows; ++i) {
        ax[i] = b[i] - ax[i];
        const double e = fabs(x[i] - 1.0);
        max_error = e > max_error ? e : max_error;
    }
    r->residual = norm2(ax, rows) / norm2(b, rows);
    r->max_error = max_error;
    r->t_residual = now_seconds() - t;
    ok = 0;

fail:
    /* Cleanup keeps the first error: later failures here are not reported over it. */
    if (matrix) cudssMatrixDestroy(matrix);
    if (rhs) cudssMatrixDestroy(rhs);
    if (solution) cudssMatrixDestroy(solution);
    if (data) cudssDataDestroy(handle, data);
    if (config) cudssConfigDestroy(config);
    if (handle) cudssDestroy(handle);
    if (d_row_start) cudaFree(d_row_start);
    if (d_columns) cudaFree(d_columns);
    if (d_values) cudaFree(d_values);
    if (d_b) cudaFree(d_b);
    if (d_x) cudaFree(d_x);
    free(ones);
    free(b);
    free(x);
    free(ax);
    csr_free(&a);
    return ok;
}

/* ---- Python ------------------------------------------------------------------------------------ */

static int set_item(PyObject *dict, const char *key, PyObject *value)
{
    if (value == NULL) {
        return -1;
    }
    int status = PyDict_SetItemString(dict, key, value);
    Py_DECREF(value);
    return status;
}

static PyObject *py_cudss_version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    int major = 0, minor = 0, patch = 0;
    char err[ERROR_SIZE];
    CHECK_CUDSS(cudssGetProperty(MAJOR_VERSION, &major));
    CHECK_CUDSS(cudssGetProperty(MINOR_VERSION, &minor));
    CHECK_CUDSS(cudssGetProperty(PATCH_LEVEL, &patch));
    return Py_BuildValue("(iii)", major, minor, patch);
fail:
    PyErr_SetString(PyExc_RuntimeError, err);
    return NULL;
}

static PyObject *py_cuda_runtime_version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    int version = 0;
    char err[ERROR_SIZE];
    CHECK_CUDA(cudaRuntimeGetVersion(&version));
    return PyLong_FromLong(version);
fail:
    PyErr_SetString(PyExc_RuntimeError, err);
    return NULL;
}

static PyObject *py_solve_poisson3d(PyObject *self, PyObject *args)
{
    (void)self;
    int n = 0;
    if (!PyArg_ParseTuple(args, "i:solve_poisson3d", &n)) {
        return NULL;
    }
    if (n < 1 || n > MAX_N) {
        PyErr_Format(PyExc_ValueError, "n must be between 1 and %d, not %d", MAX_N, n);
        return NULL;
    }
    SolveResult r;
    memset(&r, 0, sizeof(r));
    char err[ERROR_SIZE] = "";
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = solve(n, &r, err);
    Py_END_ALLOW_THREADS
    if (status != 0) {
        PyErr_SetString(PyExc_RuntimeError, err);
        return NULL;
    }
    PyObject *timings = PyDict_New();
    PyObject *result = PyDict_New();
    if (timings == NULL || result == NULL
        || set_item(timings, "build_matrix", PyFloat_FromDouble(r.t_build))
        || set_item(timings, "context", PyFloat_FromDouble(r.t_context))
        || set_item(timings, "upload", PyFloat_FromDouble(r.t_upload))
        || set_item(timings, "analysis", PyFloat_FromDouble(r.t_analysis))
        || set_item(timings, "factorization", PyFloat_FromDouble(r.t_factorization))
        || set_item(timings, "solve", PyFloat_FromDouble(r.t_solve))
        || set_item(timings, "download", PyFloat_FromDouble(r.t_download))
        || set_item(timings, "residual", PyFloat_FromDouble(r.t_residual))
        || set_item(result, "n", PyLong_FromLong(r.n))
        || set_item(result, "unknowns", PyLong_FromLong(r.rows))
        || set_item(result, "nnz_upper", PyLong_FromLong(r.nnz))
        || set_item(result, "lu_nnz", PyLong_FromLongLong(r.lu_nnz))
        || set_item(result, "cuda_runtime_version", PyLong_FromLong(r.runtime_version))
        || set_item(result, "cuda_driver_version", PyLong_FromLong(r.driver_version))
        || set_item(result, "residual", PyFloat_FromDouble(r.residual))
        || set_item(result, "max_error", PyFloat_FromDouble(r.max_error))
        || PyDict_SetItemString(result, "timings", timings)) {
        Py_XDECREF(timings);
        Py_XDECREF(result);
        return NULL;
    }
    Py_DECREF(timings);
    return result;
}

static PyMethodDef methods[] = {
    {"cudss_version", py_cudss_version, METH_NOARGS,
     "cudss_version() -> (major, minor, patch) of the loaded libcudss (cudssGetProperty)."},
    {"cuda_runtime_version", py_cuda_runtime_version, METH_NOARGS,
     "cuda_runtime_version() -> the loaded libcudart's version, e.g. 13000 (cudaRuntimeGetVersion)."},
    {"solve_poisson3d", py_solve_poisson3d, METH_VARARGS,
     "solve_poisson3d(n) -> dict: solve the n^3-unknown 7-point Poisson system A x = A * ones with "
     "cuDSS (SPD, upper triangle) and report per-phase timings in seconds, the relative residual "
     "||b - A x|| / ||b|| and max |x - 1|, computed on the host in double precision."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "_cudss_solver",
    "cuDSS from NVIDIA's pip wheels, through the Python limited API.",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__cudss_solver(void)
{
    return PyModule_Create(&module);
}
