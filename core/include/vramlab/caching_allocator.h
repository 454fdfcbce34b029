// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/units.h"

#include <cstdint>
#include <set>
#include <vector>

namespace vramlab {

/// How the modelled allocator is set up (PYTORCH_CUDA_ALLOC_CONF and the GPU).
struct CachingAllocatorConfig {
    bool expandableSegments = false; ///< expandable_segments:True
    Bytes capacityBytes = 0; ///< what cudaMalloc can hand out in all (0: unlimited)
};

/// A model of PyTorch's CUDA caching allocator (one device, one stream, no CUDA graphs),
/// rule for rule from c10/cuda/CUDACachingAllocator.cpp@001074d25084fdb87a799823e395a50f5ec044d3
/// (DeviceCachingAllocator::malloc/free): requests rounded to 512 B (round_size); requests of
/// at most 1 MiB served from a small pool of 2 MiB segments, larger ones from a large pool
/// (get_allocation_size: < 10 MiB -> a 20 MiB segment, else rounded up to 2 MiB); best fit by
/// (size, address) (get_free_block); a found block split when the rest is >= 512 B (small pool,
/// expandable segments) or > 1 MiB (large pool) (should_split); freed blocks merged with free
/// neighbours (free_block/try_merge_blocks); when cudaMalloc would exceed the capacity, every
/// unsplit cached segment is released and the allocation retried (release_cached_blocks).
/// With expandable segments each pool has one segment that maps pages (2 MiB small, 20 MiB
/// large) at its lowest free address (try_allocate_expandable_block) and unmaps free pages
/// under pressure (unmap_block). Not modelled: max_split_size_mb, roundup_power2_divisions,
/// garbage_collection_threshold, streams and events (a block is free as soon as it is freed).
class CachingAllocator {
public:
    using Handle = std::int32_t;
    static constexpr Bytes kMinBlockBytes = 512; ///< kMinBlockSize
    static constexpr Bytes kSmallSizeBytes = 1 * kMiB; ///< kSmallSize: largest small-pool request
    static constexpr Bytes kSmallBufferBytes = 2 * kMiB; ///< kSmallBuffer: small segment
    static constexpr Bytes kLargeBufferBytes = 20 * kMiB; ///< kLargeBuffer: segment for 1-10 MiB requests
    static constexpr Bytes kMinLargeAllocBytes = 10 * kMiB; ///< kMinLargeAlloc
    static constexpr Bytes kRoundLargeBytes = 2 * kMiB; ///< kRoundLarge

    explicit CachingAllocator(CachingAllocatorConfig config = {});

    /// round_size(): the block size a request of `bytes` gets.
    static Bytes roundSize(Bytes bytes);
    /// get_allocation_size(): the segment cudaMalloc is asked for when no cached block fits.
    static Bytes allocationSize(Bytes roundedBytes);

    /// malloc(): never fails; an allocation that would not fit even after releasing the cache
    /// sets outOfMemory() and is made beyond the capacity, so the peaks stay meaningful.
    Handle allocate(Bytes bytes);
    void release(Handle handle); ///< free()
    void emptyCache(); ///< release_cached_blocks()

    Bytes blockBytes(Handle handle) const { return m_blocks[static_cast<size_t>(handle)].size; }
    Bytes allocatedBytes() const { return m_allocated; } ///< allocated_bytes.all.current
    Bytes reservedBytes() const { return m_reserved; } ///< reserved_bytes.all.current
    Bytes peakAllocatedBytes() const { return m_peakAllocated; } ///< torch.cuda.max_memory_allocated()
    Bytes peakReservedBytes() const { return m_peakReserved; } ///< torch.cuda.max_memory_reserved()
    Count segments() const { return m_segments; } ///< cudaMalloc'd segments alive (not expandable)
    bool outOfMemory() const { return m_outOfMemory; }
    /// Cached free blocks (both pools) and the most there were at once.
    Count cachedBlocks() const { return Count(m_pools[0].free.size() + m_pools[1].free.size()); }
    Count operations() const { return m_operations; }

private:
    struct Block {
        Bytes addr = 0;
        Bytes size = 0;
        Handle prev = -1, next = -1;
        bool allocated = false;
        bool mapped = true;
        bool small = false;
    };
    struct FreeEntry { ///< the key inline: best fit compares no block
        Bytes size;
        Bytes addr;
        Handle handle;
        bool operator<(const FreeEntry& o) const { return size != o.size ? size < o.size : addr < o.addr; }
    };
    struct Pool {
        std::set<FreeEntry> free; ///< mapped free blocks by (size, address): BlockPool::blocks
        std::vector<Handle> unmapped; ///< expandable: unmapped ranges by address
        Bytes base = 0; ///< expandable: the segment's first address
        bool expandableMade = false;
    };

    Handle newBlock(const Block& b);
    void dropBlock(Handle h);
    Handle splitBlock(Handle h, Bytes front); ///< h keeps `front` bytes; returns the rest's block
    Pool& poolOf(const Block& b) { return m_pools[b.small ? 0 : 1]; }
    void insertFree(Handle h);
    void eraseFree(Handle h);
    void insertUnmapped(Handle h);
    void eraseUnmapped(Handle h);
    Handle getFreeBlock(bool small, Bytes size);
    Handle allocBlock(bool small, Bytes size, Bytes allocSize, bool ignoreCapacity);
    Handle allocExpandable(bool small, Bytes size, bool ignoreCapacity);
    bool mapBlock(Handle h, Bytes size, bool ignoreCapacity);
    void unmapBlock(Handle h);
    bool tryMerge(Handle dst, Handle src);
    void reserve(Bytes bytes);
    Bytes pageBytes(bool small) const { return small ? kSmallBufferBytes : kLargeBufferBytes; }

    CachingAllocatorConfig m_config;
    std::vector<Block> m_blocks;
    std::vector<Handle> m_recycled;
    Pool m_pools[2]; ///< small, large
    Bytes m_nextAddr = 0;
    Bytes m_allocated = 0, m_reserved = 0, m_peakAllocated = 0, m_peakReserved = 0;
    Count m_segments = 0;
    Count m_operations = 0;
    bool m_outOfMemory = false;
};

} // namespace vramlab
