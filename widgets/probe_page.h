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
    ProbeView* view() const { return m_view; }

protected:
    void recompute() override;

private:
    ProbeView* m_view;
};

} // namespace vramlab
