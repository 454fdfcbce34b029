// SPDX-License-Identifier: MIT
#pragma once

#include "vramlab/report.h"

#include <QTextBrowser>

namespace vramlab {

/// Each component's formula with the current numbers plugged in, in words a workshop
/// audience follows; then overheads, FLOPs and step time.
class ExplainView : public QTextBrowser {
    Q_OBJECT
public:
    explicit ExplainView(QWidget* parent = nullptr);
    /// The report explained, or without one `error` under `heading`.
    void setReport(const Report* report, const QString& error,
        const QString& heading = QStringLiteral("Not a valid configuration"));
    static QString html(const Report& report);

private:
    /// Changes only the paragraphs whose text changed when `html` has the page's structure
    /// (a slider move changes a few numbers; setHtml would parse, shape and lay out every
    /// paragraph again). False when the structure differs: nothing was changed.
    bool patch(const QString& html);

    QString m_html; ///< what is shown
};

} // namespace vramlab
