// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Pieces of the Megatron-LM writer the DeepSpeed writer and the readers share.
#include "core/launch_common.h"

#include <string>

namespace paralens::launch {

extern const char* const kMegatronVersion;
/// --cp-comm-type's value for a K/V exchange ("p2p", "allgather", "a2a"; "" for Default).
const char* megatronCpComm(CpComm c);
/// The model's shape flags (--num-layers ... --vocab-size), Megatron-LM names.
void megatronModelArgs(const ModelSpec& m, ArgList& a);
/// "torchrun --nnodes N --nproc-per-node G ... ENTRY" for the scenario's node count.
std::string torchrunLine(const Scenario& s, const std::string& entry);
/// A comment line with the srun command that starts the script on every node.
std::string slurmComment(const Scenario& s);

} // namespace paralens::launch
