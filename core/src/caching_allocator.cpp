// SPDX-License-Identifier: MIT
// Rules from c10/cuda/CUDACachingAllocator.cpp@001074d25084fdb87a799823e395a50f5ec044d3
// (pytorch/pytorch); each function names the one it models.
#include "vramlab/caching_allocator.h"

#include <algorithm>

namespace vramlab {

CachingAllocator::CachingAllocator(CachingAllocatorConfig config)
    : m_config(config)
{
    m_blocks.reserve(256);
}

Bytes CachingAllocator::roundSize(Bytes bytes)
{
    // round_size() without roundup_power2_divisions (off by default).
    return bytes < kMinBlockBytes ? kMinBlockBytes : roundUp(bytes, kMinBlockBytes);
}

Bytes CachingAllocator::allocationSize(Bytes size)
{
    if (size <= kSmallSizeBytes)
        return kSmallBufferBytes;
    if (size < kMinLargeAllocBytes)
        return kLargeBufferBytes;
    return roundUp(size, kRoundLargeBytes);
}

CachingAllocator::Handle CachingAllocator::newBlock(const Block& b)
{
    if (!m_recycled.empty()) {
        const Handle h = m_recycled.back();
        m_recycled.pop_back();
        m_blocks[static_cast<size_t>(h)] = b;
        return h;
    }
    m_blocks.push_back(b);
    return static_cast<Handle>(m_blocks.size() - 1);
}

void CachingAllocator::dropBlock(Handle h)
{
    m_recycled.push_back(h);
}

// Block h keeps its first `front` bytes; the rest becomes a block of its own right after it.
CachingAllocator::Handle CachingAllocator::splitBlock(Handle h, Bytes front)
{
    Block rest = m_blocks[static_cast<size_t>(h)];
    rest.addr += front;
    rest.size -= front;
    rest.prev = h;
    const Handle r = newBlock(rest); // may reallocate m_blocks
    Block& b = m_blocks[static_cast<size_t>(h)];
    if (b.next >= 0)
        m_blocks[static_cast<size_t>(b.next)].prev = r;
    b.next = r;
    b.size = front;
    return r;
}

// BlockComparatorSize: by size, then address (one stream).
void CachingAllocator::insertFree(Handle h)
{
    const Block& b = m_blocks[static_cast<size_t>(h)];
    poolOf(b).free.insert(FreeEntry { b.size, b.addr, h });
}

void CachingAllocator::eraseFree(Handle h)
{
    const Block& b = m_blocks[static_cast<size_t>(h)];
    poolOf(b).free.erase(FreeEntry { b.size, b.addr, h });
}

void CachingAllocator::insertUnmapped(Handle h)
{
    std::vector<Handle>& v = poolOf(m_blocks[static_cast<size_t>(h)]).unmapped;
    auto byAddr = [this](Handle a, Handle b) {
        return m_blocks[static_cast<size_t>(a)].addr < m_blocks[static_cast<size_t>(b)].addr;
    };
    v.insert(std::lower_bound(v.begin(), v.end(), h, byAddr), h);
}

void CachingAllocator::eraseUnmapped(Handle h)
{
    std::vector<Handle>& v = poolOf(m_blocks[static_cast<size_t>(h)]).unmapped;
    v.erase(std::remove(v.begin(), v.end(), h), v.end());
}

void CachingAllocator::reserve(Bytes bytes)
{
    m_reserved += bytes;
    m_peakReserved = std::max(m_peakReserved, m_reserved);
}

// get_free_block(): the smallest cached block >= size; under expandable segments a block
// that can grow into unmapped space counts with that space ("expandable_size").
CachingAllocator::Handle CachingAllocator::getFreeBlock(bool small, Bytes size)
{
    std::set<FreeEntry>& v = m_pools[small ? 0 : 1].free;
    auto it = v.lower_bound(FreeEntry { size, 0, -1 });
    if (it == v.end())
        return -1;
    if (m_config.expandableSegments) {
        auto expandable = [this](Handle h) {
            const Block& b = m_blocks[static_cast<size_t>(h)];
            const bool grows = b.next >= 0 && !m_blocks[static_cast<size_t>(b.next)].mapped;
            return b.size + (grows ? m_blocks[static_cast<size_t>(b.next)].size : 0);
        };
        for (auto next = std::next(it); next != v.end() && expandable(next->handle) < expandable(it->handle); ++next)
            it = next;
    }
    const Handle h = it->handle;
    v.erase(it);
    return h;
}

// alloc_block(): a new cudaMalloc segment of allocSize, unless the device has no room.
CachingAllocator::Handle CachingAllocator::allocBlock(bool small, Bytes size, Bytes allocSize, bool ignoreCapacity)
{
    if (m_config.expandableSegments)
        return allocExpandable(small, size, ignoreCapacity);
    if (!ignoreCapacity && m_config.capacityBytes > 0 && m_reserved + allocSize > m_config.capacityBytes)
        return -1;
    Block b;
    b.addr = m_nextAddr;
    b.size = allocSize;
    b.small = small;
    m_nextAddr += allocSize;
    reserve(allocSize);
    ++m_segments;
    return newBlock(b);
}

// map_block(): maps whole pages from the start of an unmapped range and merges the result
// with free mapped neighbours; all or nothing (cuMemCreate's OOM rolls the pages back).
bool CachingAllocator::mapBlock(Handle h, Bytes size, bool ignoreCapacity)
{
    Block& b = m_blocks[static_cast<size_t>(h)];
    const Bytes mapped = std::min(b.size, roundUp(size, pageBytes(b.small)));
    if (!ignoreCapacity && m_config.capacityBytes > 0 && m_reserved + mapped > m_config.capacityBytes)
        return false;
    eraseUnmapped(h);
    if (mapped < b.size)
        insertUnmapped(splitBlock(h, mapped)); // the unmapped rest
    m_blocks[static_cast<size_t>(h)].mapped = true;
    tryMerge(h, m_blocks[static_cast<size_t>(h)].prev);
    tryMerge(h, m_blocks[static_cast<size_t>(h)].next);
    insertFree(h);
    reserve(mapped);
    return true;
}

// try_allocate_expandable_block()/find_expandable_block(): the lowest address where free and
// unmapped space together hold `size` (one segment per pool), mapped page by page.
CachingAllocator::Handle CachingAllocator::allocExpandable(bool small, Bytes size, bool ignoreCapacity)
{
    Pool& pool = m_pools[small ? 0 : 1];
    if (!pool.expandableMade) {
        // PyTorch reserves address space for 1 1/8 of the GPU's memory; the capacity check
        // below limits what is mapped, so the model's range is simply large.
        const Bytes space = roundUp(Bytes(1) << 52, pageBytes(small));
        pool.base = small ? (Bytes(1) << 56) : (Bytes(2) << 56);
        Block b;
        b.addr = pool.base;
        b.size = space;
        b.small = small;
        b.mapped = false;
        insertUnmapped(newBlock(b));
        pool.expandableMade = true;
    }
    auto allocatable = [this](Handle h) { return h >= 0 && !m_blocks[static_cast<size_t>(h)].allocated; };
    Handle candidate = -1;
    for (Handle u : pool.unmapped) {
        Handle c = u;
        if (allocatable(m_blocks[static_cast<size_t>(u)].prev))
            c = m_blocks[static_cast<size_t>(u)].prev;
        Bytes room = 0;
        for (Handle x = c; room < size && allocatable(x); x = m_blocks[static_cast<size_t>(x)].next)
            room += m_blocks[static_cast<size_t>(x)].size;
        if (room >= size) {
            candidate = c;
            break;
        }
    }
    if (candidate < 0)
        return -1;
    if (!m_blocks[static_cast<size_t>(candidate)].mapped
        && !mapBlock(candidate, std::min(m_blocks[static_cast<size_t>(candidate)].size, size), ignoreCapacity))
        return -1;
    while (m_blocks[static_cast<size_t>(candidate)].size < size) {
        const Bytes remaining = size - m_blocks[static_cast<size_t>(candidate)].size;
        const Handle next = m_blocks[static_cast<size_t>(candidate)].next;
        if (!mapBlock(next, std::min(remaining, m_blocks[static_cast<size_t>(next)].size), ignoreCapacity))
            return -1;
        candidate = next; // map_block merged the free block before it into `next`
    }
    eraseFree(candidate);
    return candidate;
}

// unmap_block(): returns the whole free pages inside a free block to the driver.
void CachingAllocator::unmapBlock(Handle h)
{
    const Block b = m_blocks[static_cast<size_t>(h)];
    const Bytes base = poolOf(b).base, page = pageBytes(b.small);
    const Bytes begin = base + roundUp(b.addr - base, page);
    const Bytes end = base + (b.addr + b.size - base) / page * page;
    if (begin >= end)
        return;
    eraseFree(h);
    if (begin > b.addr) {
        Block before = b;
        before.size = begin - b.addr;
        before.next = h;
        const Handle x = newBlock(before);
        if (before.prev >= 0)
            m_blocks[static_cast<size_t>(before.prev)].next = x;
        m_blocks[static_cast<size_t>(h)].prev = x;
        insertFree(x);
    }
    if (end < b.addr + b.size) // the mapped tail past the last whole page stays a free block
        insertFree(splitBlock(h, end - b.addr));
    Block& nb = m_blocks[static_cast<size_t>(h)];
    nb.addr = begin;
    nb.size = end - begin;
    nb.mapped = false;
    m_reserved -= end - begin;
    tryMerge(h, nb.prev);
    tryMerge(h, m_blocks[static_cast<size_t>(h)].next);
    insertUnmapped(h);
}

// try_merge_blocks(): src (a free neighbour in the same mapped state) is absorbed by dst.
bool CachingAllocator::tryMerge(Handle dst, Handle src)
{
    if (src < 0)
        return false;
    const Block s = m_blocks[static_cast<size_t>(src)];
    Block& d = m_blocks[static_cast<size_t>(dst)];
    if (s.allocated || s.mapped != d.mapped)
        return false;
    if (s.mapped)
        eraseFree(src);
    else
        eraseUnmapped(src);
    if (d.prev == src) {
        d.addr = s.addr;
        d.prev = s.prev;
        if (d.prev >= 0)
            m_blocks[static_cast<size_t>(d.prev)].next = dst;
    } else {
        d.next = s.next;
        if (d.next >= 0)
            m_blocks[static_cast<size_t>(d.next)].prev = dst;
    }
    d.size += s.size;
    dropBlock(src);
    return true;
}

void CachingAllocator::emptyCache()
{
    // release_blocks(): unsplit cached segments go back to cudaFree; expandable segments
    // unmap their free pages.
    std::vector<Handle> toUnmap;
    for (Pool& pool : m_pools) {
        for (auto it = pool.free.begin(); it != pool.free.end();) {
            const Block& b = m_blocks[static_cast<size_t>(it->handle)];
            if (m_config.expandableSegments) {
                toUnmap.push_back(it->handle);
                ++it;
            } else if (b.prev < 0 && b.next < 0) {
                m_reserved -= b.size;
                --m_segments;
                dropBlock(it->handle);
                it = pool.free.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (Handle h : toUnmap)
        unmapBlock(h);
}

CachingAllocator::Handle CachingAllocator::allocate(Bytes bytes)
{
    ++m_operations;
    const Bytes size = roundSize(bytes);
    const bool small = size <= kSmallSizeBytes; // get_pool()
    const Bytes allocSize = allocationSize(size);
    Handle h = getFreeBlock(small, size);
    if (h < 0)
        h = allocBlock(small, size, allocSize, false);
    if (h < 0 && m_config.capacityBytes > 0) { // release_cached_blocks() and retry
        emptyCache();
        h = allocBlock(small, size, allocSize, false);
    }
    if (h < 0) { // the real allocator raises OutOfMemoryError here
        m_outOfMemory = true;
        h = allocBlock(small, size, allocSize, true);
    }
    if (h < 0) { // no address range (not reached with the range above): a plain segment
        const bool expandable = m_config.expandableSegments;
        m_config.expandableSegments = false;
        h = allocBlock(small, size, allocSize, true);
        m_config.expandableSegments = expandable;
    }
    // should_split() and alloc_found_block(): the request takes the front of the block.
    const Bytes remaining = m_blocks[static_cast<size_t>(h)].size - size;
    const bool split = small || m_config.expandableSegments ? remaining >= kMinBlockBytes : remaining > kSmallSizeBytes;
    if (split)
        insertFree(splitBlock(h, size));
    Block& b = m_blocks[static_cast<size_t>(h)];
    b.allocated = true;
    m_allocated += b.size;
    m_peakAllocated = std::max(m_peakAllocated, m_allocated);
    return h;
}

void CachingAllocator::release(Handle h)
{
    ++m_operations;
    Block& b = m_blocks[static_cast<size_t>(h)];
    b.allocated = false;
    m_allocated -= b.size;
    tryMerge(h, b.prev);
    tryMerge(h, m_blocks[static_cast<size_t>(h)].next);
    insertFree(h);
}

} // namespace vramlab
