// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/collective.h"

#include <array>
#include <utility>

namespace paralens {
namespace {
constexpr std::array<std::pair<Collective, std::string_view>, 6> kNames{{
    {Collective::AllReduce, "all_reduce"},
    {Collective::AllGather, "all_gather"},
    {Collective::ReduceScatter, "reduce_scatter"},
    {Collective::AllToAll, "alltoall"},
    {Collective::SendRecv, "sendrecv"},
    {Collective::Broadcast, "broadcast"},
}};
} // namespace

std::string_view toString(Collective c)
{
    for (const auto& [k, n] : kNames)
        if (k == c)
            return n;
    return "?";
}

std::optional<Collective> parseCollective(std::string_view s)
{
    for (const auto& [k, n] : kNames)
        if (n == s)
            return k;
    return std::nullopt;
}

std::string_view toString(Span s)
{
    return s == Span::ScaleUp ? "intra" : "inter";
}

double busFactor(Collective c, int ranks)
{
    if (ranks <= 1)
        return c == Collective::SendRecv || c == Collective::Broadcast ? 1.0 : 0.0;
    const double n = ranks;
    switch (c) {
    case Collective::AllReduce:
        return 2.0 * (n - 1) / n;
    case Collective::AllGather:
    case Collective::ReduceScatter:
    case Collective::AllToAll:
        return (n - 1) / n;
    case Collective::SendRecv:
    case Collective::Broadcast:
        return 1.0;
    }
    return 1.0;
}

} // namespace paralens
