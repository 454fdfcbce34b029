// SPDX-License-Identifier: MIT
#pragma once

#include "page.h"

namespace vramlab {

class CompareView;

/// Methods, ZeRO stages and two scenario files side by side (CompareView) for the document.
class ComparePage : public Page {
    Q_OBJECT
public:
    explicit ComparePage(ScenarioDocument* document, QWidget* parent = nullptr);
    QString title() const override { return QStringLiteral("Compare"); }
    ChartKind chartKind() const override;
    QVector<Scenario> chartScenarios(QStringList* labels) const override;
    void setTheme(const PlotTheme& theme) override;

    CompareView* view() const { return m_view; }

protected:
    void recompute() override;

private:
    void openSide(int side);

    CompareView* m_view;
};

} // namespace vramlab
