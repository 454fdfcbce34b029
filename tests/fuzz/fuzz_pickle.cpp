// SPDX-License-Identifier: MIT
// libFuzzer target: any bytes through the restricted pickle reader and, when they parse,
// the memory snapshot analysis. Bad input may only end in InputError (PickleError is one);
// a crash, a sanitizer report, a hang or another exception is a bug. The limits are small
// so that a bomb is refused in microseconds.
#include "vramlab/errors.h"
#include "vramlab/memory_snapshot.h"
#include "vramlab/pickle_reader.h"

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    vramlab::PickleLimits limits;
    limits.maxValues = 200'000;
    limits.maxMemo = 200'000;
    limits.maxExpandedValues = 10'000'000;
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    try {
        const vramlab::PickleDocument doc = vramlab::parsePickle(bytes, "fuzz.pickle", limits);
        if (doc.depth() > limits.maxDepth || doc.expandedValues() > limits.maxExpandedValues)
            __builtin_trap();
        const vramlab::MemorySnapshot s = vramlab::analyzeSnapshot(doc, "fuzz.pickle");
        for (const vramlab::SnapshotDevice& d : s.devices) {
            vramlab::Bytes sum = 0;
            for (vramlab::Bytes b : d.categoryBytesAtPeak)
                sum += b;
            vramlab::Bytes alive = 0;
            for (const vramlab::SnapshotBlock& b : d.aliveAtPeak)
                alive += b.sizeBytes;
            if (sum != alive || d.curve.empty())
                __builtin_trap();
        }
    } catch (const vramlab::InputError&) {
    }
    return 0;
}
