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

} // namespace paralens
