// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Replaces the global operator new/delete of the test executable that includes this header
// (include it from exactly one source file) and counts every allocation, so a test can
// assert that a hot path does not touch the heap: compare g_allocations before and after.
#include <atomic>
#include <cstdlib>
#include <new>

inline std::atomic<long> g_allocations{0};

void* operator new(std::size_t n)
{
    ++g_allocations;
    if (void* p = std::malloc(n ? n : 1))
        return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept
{
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept
{
    std::free(p);
}
