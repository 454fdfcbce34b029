// SPDX-License-Identifier: MIT
#include "vramlab/report.h"

namespace vramlab {

const Component* Report::component(std::string_view key) const
{
    for (const Component& c : components)
        if (c.key == key)
            return &c;
    return nullptr;
}

Bytes Report::bytesOf(std::string_view key) const
{
    if (key == "total")
        return total;
    const Component* c = component(key);
    return c ? c->bytes : 0;
}

} // namespace vramlab
