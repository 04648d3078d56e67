// SPDX-License-Identifier: GPL-3.0-or-later
#include "measure/no_device.h"

#include "measure/versions.h"
#include "runtime_libs.h"

#include <dlfcn.h>

namespace paralens::measure {
namespace {

/// No driver: the same words as the launcher's for a missing library when libcuda.so.1
/// does not load, the loader's reason included.
std::string driverMissing()
{
    if (void* h = dlopen(kDriverLib.soname, RTLD_LAZY | RTLD_LOCAL)) {
        dlclose(h);
        return "no NVIDIA driver loaded";
    }
    return "cannot load " + loadFailure(kDriverLib, dlerror());
}

} // namespace

bool isNoDevice(cudaError_t e, int count)
{
    return e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ||
           e == cudaErrorInitializationError || e == cudaErrorSystemDriverMismatch ||
           e == cudaErrorStubLibrary || e == cudaErrorCompatNotSupportedOnDevice ||
           (e == cudaSuccess && count == 0);
}

std::string noDeviceMessage(cudaError_t e)
{
    std::string why;
    if (e == cudaErrorInsufficientDriver) {
        // cudaDriverGetVersion gives 0 where no driver is installed.
        int driver = 0, runtime = 0;
        (void)cudaDriverGetVersion(&driver);
        (void)cudaRuntimeGetVersion(&runtime);
        why = driver == 0 ? driverMissing()
                          : "the NVIDIA driver supports CUDA " + cudaVersionString(driver) +
                                ", older than the CUDA " + cudaVersionString(runtime) +
                                " runtime this tool was built with";
    } else if (e == cudaErrorStubLibrary) {
        why = "libcuda.so.1 is the CUDA toolkit's stub, not the NVIDIA driver";
    } else if (e == cudaErrorSystemDriverMismatch) {
        why = "the NVIDIA kernel module and libcuda.so.1 are from different driver versions";
    } else if (e == cudaErrorInitializationError) {
        why = "the NVIDIA driver failed to initialise";
    } else if (e == cudaErrorCompatNotSupportedOnDevice) {
        why = "the CUDA forward-compatibility driver does not support this GPU";
    }
    (void)cudaGetLastError(); // the error is reported here, not by a later call
    return why.empty() ? "no CUDA device visible" : "no CUDA device visible: " + why;
}

} // namespace paralens::measure
