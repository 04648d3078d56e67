// SPDX-License-Identifier: GPL-3.0-or-later
// paralens-measure's entry point. It links no CUDA library, so it starts on any machine: it
// loads the CUDA runtime, NCCL and cuBLASLt by name, and where one does not load
// it prints one line naming each that failed and exits with the "no CUDA device" code, which
// the dynamic loader could not do for a binary linked to them (it stops before main()).
// Then it loads the measurement module and hands over; the module names a missing driver.
// measure/README.md explains the choice.
#include "core/measure_exit_codes.h"
#include "measure/usage.h"
#include "runtime_libs.h"

#include <climits>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <unistd.h>

namespace {

using namespace paralens::measure;

/// Every runtime library that does not load, as "SONAME (what; package P: why)", joined by ", ".
std::string missingLibraries()
{
    std::string missing;
    for (const auto& lib : kRuntimeLibs) {
        if (dlopen(lib.soname, RTLD_NOW | RTLD_GLOBAL)) // kept open: the module uses it
            continue;
        if (!missing.empty())
            missing += ", ";
        missing += loadFailure(lib, dlerror());
    }
    return missing;
}

std::string executableDir()
{
    char path[PATH_MAX] = {};
    const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
        return ".";
    std::string dir(path, static_cast<std::size_t>(n));
    return dir.substr(0, dir.rfind('/'));
}

/// The module beside the launcher (build tree) or in the installed library folder.
std::string modulePath()
{
    const std::string dir = executableDir();
    for (const std::string& p :
         {dir + "/" PARALENS_MEASURE_IMPL_NAME,
          dir + "/" PARALENS_MEASURE_IMPL_INSTALLED "/" PARALENS_MEASURE_IMPL_NAME})
        if (access(p.c_str(), R_OK) == 0)
            return p;
    return {};
}

bool wantsHelpOrVersion(int argc, char** argv, bool* version)
{
    for (int i = 1; i < argc; ++i) {
        *version = std::strcmp(argv[i], "--version") == 0;
        if (*version || std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0)
            return true;
    }
    return false;
}

} // namespace

int main(int argc, char** argv)
{
    const std::string missing = missingLibraries();
    if (!missing.empty()) {
        bool version = false;
        if (wantsHelpOrVersion(argc, argv, &version)) { // help needs no GPU
            std::fputs(version ? "paralens-measure " PARALENS_VERSION "\n" : kUsage, stdout);
            return ExitOk;
        }
        std::fprintf(stderr, "error: no CUDA device visible: cannot load %s\n", missing.c_str());
        return ExitNoDevice;
    }
    const std::string module = modulePath();
    if (module.empty()) {
        std::fprintf(stderr, "error: %s not found beside %s (a broken installation)\n",
                     PARALENS_MEASURE_IMPL_NAME, executableDir().c_str());
        return ExitFailure;
    }
    // RTLD_GLOBAL: MPI and NCCL's plugins resolve symbols against what is already loaded.
    void* impl = dlopen(module.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!impl) { // another library the module needs (MPI, a newer libstdc++) is missing
        std::fprintf(stderr, "error: no CUDA device visible: cannot load %s\n", dlerror());
        return ExitNoDevice;
    }
    using Entry = int (*)(int, char**);
    const auto entry = reinterpret_cast<Entry>(dlsym(impl, "paralens_measure_main"));
    if (!entry) {
        std::fprintf(stderr, "error: %s has no paralens_measure_main\n", module.c_str());
        return ExitFailure;
    }
    return entry(argc, argv);
}
