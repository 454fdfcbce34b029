// SPDX-License-Identifier: MIT
#pragma once

#include "plot_theme.h"
#include "vramlab/chart_data.h"
#include "vramlab/scenario.h"

#include <QStringList>
#include <QVector>
#include <QWidget>

namespace vramlab {

class ScenarioDocument;

/// One tab of the explorer. It follows the document on its own: each `changed` marks it
/// stale, and it recomputes only while it is the tab on show (a hidden page does no work)
/// or when it is shown again. It names the chart it shows for File > Export.
class Page : public QWidget {
    Q_OBJECT
public:
    /// The tab's title ("Sweep").
    virtual QString title() const = 0;
    /// The chart on screen as an export kind (a page without a chart exports the breakdown).
    virtual ChartKind chartKind() const { return ChartKind::Breakdown; }
    /// The scenarios that chart draws (the document's; the A/B sides for compare-files)
    /// and their labels.
    virtual QVector<Scenario> chartScenarios(QStringList* labels) const;
    /// Why File > Export cannot write this tab's content as `extension` ("png", "csv"), or
    /// empty when it can: a tab never has another tab's chart exported in its place.
    virtual QString exportRefusal(const QString& extension) const
    {
        Q_UNUSED(extension);
        return {};
    }
    /// Colours of its charts (light/dark, presenter sizes).
    virtual void setTheme(const PlotTheme& theme) { Q_UNUSED(theme); }

    bool isStale() const { return m_stale; }
    /// Recomputes now when stale.
    void refresh();

signals:
    /// Something the user asked for failed (a file that does not open): the window's banner says it.
    void failed(const QString& message);

protected:
    Page(ScenarioDocument* document, QWidget* parent);
    ScenarioDocument* document() const { return m_doc; }
    /// Rebuilds what the page shows from the document.
    virtual void recompute() = 0;
    bool event(QEvent* event) override;

private:
    void markStale();

    ScenarioDocument* m_doc;
    bool m_stale = true;
};

} // namespace vramlab
