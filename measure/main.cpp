// SPDX-License-Identifier: GPL-3.0-or-later
// paralens-measure: NCCL, cuBLASLt and HBM micro-benchmarks that write a calibration profile.
#include "measure/collectives.h"
#include "measure/common.h"
#include "measure/gemm.h"
#include "measure/membw.h"
#include "measure/no_device.h"
#include "measure/usage.h"
#include "measure/versions.h"
#include "measure/world.h"

#include "core/calibration.h"
#include "core/error.h"
#include "core/scenario_io.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#ifdef PARALENS_MEASURE_NVML
#include <nvml.h>
#endif

namespace paralens::measure {

void progress(const std::string& phase, const std::string& fields)
{
    std::fprintf(stderr, "{\"phase\":\"%s\"%s%s}\n", phase.c_str(), fields.empty() ? "" : ",",
                 fields.c_str());
    std::fflush(stderr);
}

namespace {

double parseSize(const std::string& s)
{
    std::size_t used = 0;
    double v = std::stod(s, &used);
    const std::string suffix = s.substr(used);
    if (suffix == "K" || suffix == "k")
        v *= units::kKiB;
    else if (suffix == "M" || suffix == "m")
        v *= units::kMiB;
    else if (suffix == "G" || suffix == "g")
        v *= units::kGiB;
    else if (!suffix.empty())
        throw std::invalid_argument("bad size '" + s + "'");
    if (!(v >= 0))
        throw std::invalid_argument("bad size '" + s + "'");
    return v;
}

std::vector<std::string> splitList(const std::string& s)
{
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty())
            out.push_back(item);
    return out;
}

int usageError(const std::string& msg)
{
    std::fprintf(stderr, "error: %s (paralens-measure --help)\n", msg.c_str());
    return ExitUsage;
}

SystemInfo systemInfo(const World& world)
{
    SystemInfo s;
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
        s.gpu_name = prop.name;
    s.gpu_count = world.worldSize();
    s.gpus_per_node = world.localDevices();
    s.nodes = world.nodes();
    for (const auto& h : world.hostOfRank())
        if (std::find(s.hosts.begin(), s.hosts.end(), h) == s.hosts.end())
            s.hosts.push_back(h);
    int v = 0;
    if (cudaRuntimeGetVersion(&v) == cudaSuccess)
        s.cuda_version = cudaVersionString(v);
    if (ncclGetVersion(&v) == ncclSuccess)
        s.nccl_version = ncclVersionString(v);
    if (cudaDriverGetVersion(&v) == cudaSuccess)
        s.driver_version = "CUDA " + cudaVersionString(v);
    int peers = 0, pairs = 0;
    for (int a = 0; a < world.localDevices(); ++a)
        for (int b = 0; b < world.localDevices(); ++b)
            if (a != b) {
                int ok = 0;
                cudaDeviceCanAccessPeer(&ok, a, b);
                peers += ok;
                ++pairs;
            }
    s.topology = std::to_string(world.localDevices()) + " GPUs per node, peer access " +
                 std::to_string(peers) + "/" + std::to_string(pairs) + " pairs";
#ifdef PARALENS_MEASURE_NVML
    if (nvmlInit_v2() == NVML_SUCCESS) {
        char drv[96] = {};
        if (nvmlSystemGetDriverVersion(drv, sizeof drv) == NVML_SUCCESS)
            s.driver_version = drv;
        nvmlDevice_t dev;
        if (nvmlDeviceGetHandleByIndex_v2(0, &dev) == NVML_SUCCESS) {
            int links = 0;
            for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; ++l) {
                nvmlEnableState_t st;
                if (nvmlDeviceGetNvLinkState(dev, l, &st) == NVML_SUCCESS &&
                    st == NVML_FEATURE_ENABLED)
                    ++links;
            }
            s.topology += ", " + std::to_string(links) + " NVLink links active on GPU 0";
        }
        nvmlShutdown();
    }
#endif
    return s;
}

std::string jsonEscape(const std::string& s)
{
    std::string out;
    for (const char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        if (static_cast<unsigned char>(c) >= 0x20)
            out += c;
    }
    return out;
}

/// `devices`: the GPUs this process sees, without NCCL or MPI, so a GUI can probe cheaply.
int listDevices()
{
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (isNoDevice(e, count)) {
        std::fprintf(stderr, "error: %s\n", noDeviceMessage(e).c_str());
        return ExitNoDevice;
    }
    if (e != cudaSuccess) {
        std::fprintf(stderr, "error: cudaGetDeviceCount: %s\n", cudaGetErrorString(e));
        return ExitFailure;
    }
    std::string out = "{\"devices\":[";
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess)
            continue;
        char pci[32] = {};
        cudaDeviceGetPCIBusId(pci, sizeof pci, i);
        char item[512];
        std::snprintf(item, sizeof item,
                      "%s{\"index\":%d,\"name\":\"%s\",\"memory_bytes\":%zu,"
                      "\"compute_capability\":\"%d.%d\",\"pci_bus_id\":\"%s\"}",
                      i ? "," : "", i, jsonEscape(prop.name).c_str(), prop.totalGlobalMem,
                      prop.major, prop.minor, jsonEscape(pci).c_str());
        out += item;
    }
    int v = 0;
    out += "],\"cuda_runtime\":\"";
    if (cudaRuntimeGetVersion(&v) == cudaSuccess)
        out += cudaVersionString(v);
    out += "\",\"cuda_driver\":\"";
    if (cudaDriverGetVersion(&v) == cudaSuccess)
        out += cudaVersionString(v);
    out += "\"}\n";
    std::fputs(out.c_str(), stdout);
    return ExitOk;
}

std::string nowIso()
{
    const std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

} // namespace
} // namespace paralens::measure

// The launcher (launcher.cpp) calls this once the CUDA libraries have loaded.
extern "C" __attribute__((visibility("default"))) int paralens_measure_main(int argc, char** argv)
{
    using namespace paralens;
    using namespace paralens::measure;
    Options opt;
    std::string cmd;
    try {
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            auto next = [&]() -> std::string {
                if (i + 1 >= argc)
                    throw std::invalid_argument(a + " needs a value");
                return argv[++i];
            };
            if (a == "--help" || a == "-h") {
                std::fputs(kUsage, stdout);
                return ExitOk;
            } else if (a == "--version") {
                std::printf("paralens-measure %s\n", PARALENS_VERSION);
                return ExitOk;
            } else if (a == "-b" || a == "--minbytes") {
                opt.min_bytes = parseSize(next());
            } else if (a == "-e" || a == "--maxbytes") {
                opt.max_bytes = parseSize(next());
            } else if (a == "-f" || a == "--stepfactor") {
                opt.factor = std::stod(next());
            } else if (a == "-w" || a == "--warmup_iters") {
                opt.warmup = std::stoi(next());
            } else if (a == "-n" || a == "--iters") {
                opt.iters = std::stoi(next());
            } else if (a == "-c" || a == "--check") {
                opt.check = true;
                if (i + 1 < argc &&
                    (std::strcmp(argv[i + 1], "0") == 0 || std::strcmp(argv[i + 1], "1") == 0))
                    opt.check = std::strcmp(argv[++i], "1") == 0;
            } else if (a == "--dtype") {
                opt.dtype = next();
                if (opt.dtype != "bf16" && opt.dtype != "fp32")
                    throw std::invalid_argument("--dtype must be bf16 or fp32");
            } else if (a == "--ops") {
                opt.ops = splitList(next());
                for (const auto& o : opt.ops)
                    if (!parseCollective(o))
                        throw std::invalid_argument("--ops: unknown collective '" + o + "'");
            } else if (a == "--groups") {
                for (const auto& g : splitList(next()))
                    opt.group_sizes.push_back(std::stoi(g));
            } else if (a == "--timeout") {
                opt.timeout_seconds = std::stod(next());
            } else if (a == "--shapes") {
                opt.shapes = next();
                parseShapes(opt.shapes);
            } else if (a == "--scenario") {
                opt.scenario = next();
            } else if (a == "--no-fp8") {
                opt.fp8 = false;
            } else if (a == "--membw-bytes") {
                opt.membw_bytes = parseSize(next());
            } else if (a == "--out") {
                opt.out = next();
            } else if (cmd.empty() && !a.empty() && a[0] != '-') {
                cmd = a;
            } else {
                throw std::invalid_argument("unknown argument '" + a + "'");
            }
        }
        if (cmd.empty())
            throw std::invalid_argument("no subcommand (collectives, gemm, membw, all)");
        if (cmd != "collectives" && cmd != "gemm" && cmd != "membw" && cmd != "all" &&
            cmd != "devices")
            throw std::invalid_argument("unknown subcommand '" + cmd + "'");
        if (opt.iters < 1 || opt.warmup < 0 || opt.factor < 1 || opt.min_bytes <= 0 ||
            opt.max_bytes < opt.min_bytes || opt.timeout_seconds <= 0)
            throw std::invalid_argument("sizes, factor, iterations or timeout out of range");
    } catch (const std::exception& e) { // std::stod/stoi throw invalid_argument/out_of_range
        return usageError(e.what());
    }
    if (cmd == "devices")
        return listDevices();
    std::vector<GemmShape> shapes =
        opt.shapes.empty() ? std::vector<GemmShape>{} : parseShapes(opt.shapes);
    if (!opt.scenario.empty()) {
        try {
            const auto layer = layerGemmShapes(loadScenarioFile(opt.scenario));
            if (layer.empty())
                throw std::invalid_argument(opt.scenario +
                                            ": the model has no GEMM with positive sizes");
            if (opt.shapes.empty())
                for (const auto& sq : defaultShapes())
                    if (sq.label == "square")
                        shapes.push_back(sq);
            shapes.insert(shapes.end(), layer.begin(), layer.end());
        } catch (const std::exception& e) {
            std::fprintf(stderr, "error: %s\n", e.what());
            return ExitUsage;
        }
    }
    if (shapes.empty())
        shapes = defaultShapes();

    std::unique_ptr<World> world;
    try {
        world = std::make_unique<World>(&argc, &argv);
    } catch (const NoDeviceError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return ExitNoDevice;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return ExitFailure;
    }

    CalibrationProfile profile;
    profile.tool = std::string("paralens-measure ") + PARALENS_VERSION;
    profile.created = nowIso();
    profile.system = systemInfo(*world);
    if (world->root())
        progress("start", "\"command\":\"" + cmd +
                              "\",\"gpus\":" + std::to_string(world->worldSize()) +
                              ",\"nodes\":" + std::to_string(world->nodes()));
    int code = ExitOk;
    std::FILE* table = world->root() ? stdout : nullptr;
    try {
        if (cmd == "collectives" || cmd == "all")
            runCollectives(*world, opt, profile.collectives, table);
        if (world->root() && (cmd == "gemm" || cmd == "all"))
            profile.gemm = runGemm(shapes, opt, table, profile.warnings);
        if (world->root() && (cmd == "membw" || cmd == "all")) {
            const auto m = runMembw(opt, table);
            profile.hbm_gbps = m.stream_gbps;
            profile.d2d_copy_gbps = m.d2d_copy_gbps;
        }
    } catch (const TimeoutError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        profile.warnings.push_back(std::string("aborted: ") + e.what());
        code = ExitTimeout;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        profile.warnings.push_back(std::string("failed: ") + e.what());
        code = ExitFailure;
    }
    if (world->root() && !opt.out.empty()) {
        try {
            saveProfileFile(profile, opt.out);
            progress("done", "\"out\":\"" + opt.out + "\",\"exit\":" + std::to_string(code));
        } catch (const InputError& e) {
            std::fprintf(stderr, "error: %s\n", e.what());
            code = ExitFailure;
        }
    }
    if (code == ExitTimeout)
        std::quick_exit(code); // aborted communicators: skip destructors that could block
    return code;
}
