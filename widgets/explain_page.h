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
    /// Text, not a chart: the review report (.md or .html) carries every formula it shows.
    QString exportRefusal(const QString& extension) const override
    {
        if (extension == QLatin1String("md") || extension == QLatin1String("html"))
            return {};
        return QStringLiteral("the Explain tab is text: export it as .md or .html (the review report, every "
                              "formula included)");
    }
    ExplainView* view() const { return m_view; }

protected:
    void recompute() override;

private:
    ExplainView* m_view;
};

} // namespace vramlab
