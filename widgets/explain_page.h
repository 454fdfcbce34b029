// SPDX-License-Identifier: MIT
#pragma once

#include "page.h"

namespace vramlab {

class ExplainView;

/// Every formula of the document's report with its numbers (ExplainView).
class ExplainPage : public Page {
    Q_OBJECT
public:
    explicit ExplainPage(ScenarioDocument* document, QWidget* parent = nullptr);
    QString title() const override { return QStringLiteral("Explain"); }
    ExplainView* view() const { return m_view; }

protected:
    void recompute() override;

private:
    ExplainView* m_view;
};

} // namespace vramlab
