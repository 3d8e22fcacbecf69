// cudss_solver_torch/_cudss_torch.so: cuDSS as a torch operator, torch.ops.cudss_solver.solve_csr.
//
// Registered through TORCH_LIBRARY, with no Python in it: the file does not depend on the Python
// version (the wheel stays cp310-abi3) but on the torch it was built against (hence torch==X.Y.*).
// It is built against torch's CPU headers too (no c10/cuda there), so the caller passes the CUDA
// stream as an integer, torch.cuda.current_stream().cuda_stream, and the cuDSS calls are in plain C
// (csr_solve.c). The Python side is cudss_solver_torch/__init__.py.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "csr_solve.h"

namespace {

CsrMatrixType matrix_type_of(const std::string &name)
{
    if (name == "general") return CSR_GENERAL;
    if (name == "symmetric") return CSR_SYMMETRIC;
    if (name == "spd") return CSR_SPD;
    TORCH_CHECK(false, "cudss_solver: matrix_type must be general, symmetric or spd, not '", name, "'");
}

CsrView view_of(const std::string &name)
{
    if (name == "full") return CSR_VIEW_FULL;
    if (name == "upper") return CSR_VIEW_UPPER;
    if (name == "lower") return CSR_VIEW_LOWER;
    TORCH_CHECK(false, "cudss_solver: view must be full, upper or lower, not '", name, "'");
}

// (x, [analysis s, factorization s, solve s, entries in the factors]) for A x = b, A given by its CSR
// arrays. b is (rows,) or (rows, k); x has b's shape, dtype and device.
std::tuple<at::Tensor, std::vector<double>> solve_csr(
    const at::Tensor &crow_indices, const at::Tensor &col_indices, const at::Tensor &values,
    const at::Tensor &b, int64_t stream, const std::string &matrix_type, const std::string &view,
    const std::string &threading_layer, int64_t host_threads)
{
    const auto device = values.device();
    TORCH_CHECK(device.is_cuda(), "cudss_solver: A must be on a CUDA device, not ", device,
                " (cuDSS solves on the GPU: move it with A.to('cuda'))");
    for (const auto *tensor : {&crow_indices, &col_indices, &b}) {
        TORCH_CHECK(tensor->device() == device, "cudss_solver: A and b must be on one device, not ",
                    device, " and ", tensor->device());
    }
    TORCH_CHECK(crow_indices.scalar_type() == at::kInt && col_indices.scalar_type() == at::kInt,
                "cudss_solver: CSR indices must be int32, not ", crow_indices.scalar_type(), " and ",
                col_indices.scalar_type());
    TORCH_CHECK(values.scalar_type() == at::kDouble || values.scalar_type() == at::kFloat,
                "cudss_solver: values must be float64 or float32, not ", values.scalar_type());
    TORCH_CHECK(b.scalar_type() == values.scalar_type(), "cudss_solver: b must have A's dtype ",
                values.scalar_type(), ", not ", b.scalar_type());
    TORCH_CHECK(crow_indices.dim() == 1 && col_indices.dim() == 1 && values.dim() == 1,
                "cudss_solver: the CSR arrays must be 1-D (no batches)");
    const int64_t rows = crow_indices.numel() - 1;
    TORCH_CHECK(rows >= 1, "cudss_solver: A has no rows");
    TORCH_CHECK(col_indices.numel() == values.numel(), "cudss_solver: ", col_indices.numel(),
                " column indices for ", values.numel(), " values");
    TORCH_CHECK((b.dim() == 1 || b.dim() == 2) && b.size(0) == rows, "cudss_solver: b must be (",
                rows, ",) or (", rows, ", k), not ", b.sizes());
    TORCH_CHECK(host_threads >= 0, "cudss_solver: host_threads must be >= 0");

    const auto crow = crow_indices.contiguous();
    const auto cols = col_indices.contiguous();
    const auto vals = values.contiguous();
    // cuDSS reads b and writes x column-major: a (rows, k) tensor is transposed into that order.
    const auto rhs = b.dim() == 1 ? b.contiguous() : b.t().contiguous();
    auto x = at::empty_like(rhs);

    CsrSolveArgs args{};
    args.device = device.index() < 0 ? 0 : device.index();
    args.stream = reinterpret_cast<void *>(static_cast<intptr_t>(stream));
    args.rows = rows;
    args.nnz = vals.numel();
    args.nrhs = b.dim() == 1 ? 1 : b.size(1);
    args.row_start = crow.data_ptr<int32_t>();
    args.columns = cols.data_ptr<int32_t>();
    args.values = vals.data_ptr();
    args.b = rhs.data_ptr();
    args.x = x.data_ptr();
    args.value_type = vals.scalar_type() == at::kFloat ? CSR_VALUES_FLOAT32 : CSR_VALUES_FLOAT64;
    args.matrix_type = matrix_type_of(matrix_type);
    args.view = view_of(view);
    // "off": no threading layer; "env": the one CUDSS_THREADING_LIB names; else a library path.
    args.threading_layer = threading_layer == "off" ? nullptr
                           : threading_layer == "env" ? ""
                                                      : threading_layer.c_str();
    args.host_threads = static_cast<int>(host_threads);

    CsrSolveTimes times{};
    char err[CSR_SOLVE_ERROR_SIZE];
    TORCH_CHECK(csr_solve(&args, &times, err) == 0, "cudss_solver: ", err);
    std::vector<double> phases{times.analysis, times.factorization, times.solve,
                               static_cast<double>(times.lu_nnz)};
    return {b.dim() == 1 ? x : x.t(), phases};
}

}  // namespace

TORCH_LIBRARY(cudss_solver, m)
{
    m.def("solve_csr(Tensor crow_indices, Tensor col_indices, Tensor values, Tensor b, int stream, "
          "str matrix_type, str view, str threading_layer, int host_threads) -> (Tensor, float[])",
          &solve_csr);
}
