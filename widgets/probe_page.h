// SPDX-License-Identifier: MIT
#pragma once

#include "page.h"

namespace vramlab {

class ProbeView;

/// Measured beside predicted for the document's scenario (ProbeView runs vramlab-probe).
class ProbePage : public Page {
    Q_OBJECT
public:
    explicit ProbePage(ScenarioDocument* document, QWidget* parent = nullptr);
    QString title() const override { return QStringLiteral("Probe"); }
    /// Measurements are not exported (yet): said, never the breakdown in their place.
    QString exportRefusal(const QString& extension) const override
    {
        Q_UNUSED(extension);
        return QStringLiteral("the Probe tab's measurements cannot be exported; export the estimate from the "
                              "Breakdown tab");
    }
    ProbeView* view() const { return m_view; }

protected:
    void recompute() override;

private:
    ProbeView* m_view;
};

} // namespace vramlab
