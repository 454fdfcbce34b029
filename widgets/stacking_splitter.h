// SPDX-License-Identifier: MIT
#pragma once

#include <QSplitter>

namespace vramlab {

/// Panes side by side where the width holds them; one above the other where only the height
/// does; and where neither does (a narrow tab on a short screen: beside a lesson, at
/// QT_SCALE_FACTOR=2), or the height is short of setFoldBelowHeight, the first pane alone, the
/// others folded until there is room again. Its
/// minimum width is the first pane's, so a narrow tab never widens the window to keep its charts.
class StackingSplitter : public QSplitter {
    Q_OBJECT
public:
    explicit StackingSplitter(QWidget* parent = nullptr);
    QSize minimumSizeHint() const override;
    /// The width every pane needs side by side (their minimums and the handles between them).
    int sideBySideWidth() const;
    /// The height every pane needs one above the other.
    int stackedHeight() const;
    /// Whether the panes after the first are folded for want of room.
    bool folded() const { return m_folded; }
    /// Below this height the first pane takes the whole width even where the panes would fit side by side
    /// (a short chart needs the width for its legend); 0, the default: only where they do not fit.
    void setFoldBelowHeight(int height) { m_foldBelowHeight = height; }

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    template <typename Extent> int sum(Extent extent) const;
    bool m_folded = false;
    int m_foldBelowHeight = 0;
};

} // namespace vramlab
