// SPDX-License-Identifier: MIT
#pragma once

#include <cublasLt.h>

#include <string>

namespace vramlab::probe {

/// cuBLASLt loaded with dlopen (libcublasLt.so.13, then .12, or the file named by
/// VRAMLAB_PROBE_CUBLASLT): the probe starts, and runs
/// `info`, `fit` and the bandwidth test, on a machine without it. Only the declarations of
/// cublasLt.h are used, so there is no link dependency.
class CublasLtLibrary {
public:
    CublasLtLibrary();
    ~CublasLtLibrary();
    CublasLtLibrary(const CublasLtLibrary&) = delete;
    CublasLtLibrary& operator=(const CublasLtLibrary&) = delete;

    bool loaded() const { return m_lib != nullptr; }
    /// Why it is not loaded (dlopen/dlsym's message), empty when it is.
    const std::string& error() const { return m_error; }

    decltype(&cublasLtCreate) create = nullptr;
    decltype(&cublasLtDestroy) destroy = nullptr;
    decltype(&cublasLtMatmulDescCreate) matmulDescCreate = nullptr;
    decltype(&cublasLtMatmulDescDestroy) matmulDescDestroy = nullptr;
    decltype(&cublasLtMatmulDescSetAttribute) matmulDescSetAttribute = nullptr;
    decltype(&cublasLtMatrixLayoutCreate) matrixLayoutCreate = nullptr;
    decltype(&cublasLtMatrixLayoutDestroy) matrixLayoutDestroy = nullptr;
    decltype(&cublasLtMatmulPreferenceCreate) preferenceCreate = nullptr;
    decltype(&cublasLtMatmulPreferenceDestroy) preferenceDestroy = nullptr;
    decltype(&cublasLtMatmulPreferenceSetAttribute) preferenceSetAttribute = nullptr;
    decltype(&cublasLtMatmulAlgoGetHeuristic) algoGetHeuristic = nullptr;
    decltype(&cublasLtMatmul) matmul = nullptr;

private:
    void* m_lib = nullptr;
    std::string m_error;
};

} // namespace vramlab::probe
