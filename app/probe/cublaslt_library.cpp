// SPDX-License-Identifier: MIT
#include "cublaslt_library.h"

#include <cstdlib>
#include <dlfcn.h>

namespace vramlab::probe {

namespace {

template <typename F> bool bind(void* lib, F& fn, const char* symbol, std::string& error)
{
    fn = reinterpret_cast<F>(dlsym(lib, symbol));
    if (!fn && error.empty())
        error = std::string("dlsym ") + symbol + ": " + dlerror();
    return fn != nullptr;
}

} // namespace

CublasLtLibrary::CublasLtLibrary()
{
    // VRAMLAB_PROBE_CUBLASLT names the library where it is not on the loader's path.
    const char* chosen = std::getenv("VRAMLAB_PROBE_CUBLASLT");
    for (const char* soname : { "libcublasLt.so.13", "libcublasLt.so.12" }) {
        m_lib = dlopen(chosen ? chosen : soname, RTLD_NOW | RTLD_LOCAL);
        if (m_lib || chosen)
            break;
    }
    if (!m_lib) {
        const char* why = dlerror();
        m_error = std::string("cuBLASLt not found (") + (chosen ? chosen : "libcublasLt.so.13 or .12")
            + "): " + (why ? why : "dlopen failed");
        return;
    }
    bool ok = bind(m_lib, create, "cublasLtCreate", m_error);
    ok = bind(m_lib, destroy, "cublasLtDestroy", m_error) && ok;
    ok = bind(m_lib, matmulDescCreate, "cublasLtMatmulDescCreate", m_error) && ok;
    ok = bind(m_lib, matmulDescDestroy, "cublasLtMatmulDescDestroy", m_error) && ok;
    ok = bind(m_lib, matmulDescSetAttribute, "cublasLtMatmulDescSetAttribute", m_error) && ok;
    ok = bind(m_lib, matrixLayoutCreate, "cublasLtMatrixLayoutCreate", m_error) && ok;
    ok = bind(m_lib, matrixLayoutDestroy, "cublasLtMatrixLayoutDestroy", m_error) && ok;
    ok = bind(m_lib, preferenceCreate, "cublasLtMatmulPreferenceCreate", m_error) && ok;
    ok = bind(m_lib, preferenceDestroy, "cublasLtMatmulPreferenceDestroy", m_error) && ok;
    ok = bind(m_lib, preferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute", m_error) && ok;
    ok = bind(m_lib, algoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic", m_error) && ok;
    ok = bind(m_lib, matmul, "cublasLtMatmul", m_error) && ok;
    if (!ok) {
        dlclose(m_lib);
        m_lib = nullptr;
    }
}

CublasLtLibrary::~CublasLtLibrary()
{
    if (m_lib)
        dlclose(m_lib);
}

} // namespace vramlab::probe
