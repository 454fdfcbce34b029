// SPDX-License-Identifier: MIT
#include "concurrency_chart.h"

#include "chart_labels.h"
#include "chart_support.h"
#include "plot_theme.h"
#include "qcustomplot_include.h"

#include <algorithm>
#include <cmath>

namespace vramlab {

namespace {

QSharedPointer<QCPAxisTickerLog> logTicker(double base)
{
    QSharedPointer<QCPAxisTickerLog> log(new QCPAxisTickerLog);
    log->setLogBase(base);
    log->setSubTickCount(0);
    return log;
}

/// Context lengths as people write them: 256, 4k, 128k (powers of two: k is 1,024).
class TokenTicker : public QCPAxisTickerLog {
protected:
    QString getTickLabel(double tick, const QLocale& locale, QChar formatChar, int precision) override
    {
        if (tick >= 1024 && std::fmod(tick, 1024) == 0)
            return QString::number(qlonglong(tick) / 1024) + QLatin1Char('k');
        return QCPAxisTickerLog::getTickLabel(tick, locale, formatChar, precision);
    }
};

QString countText(double v)
{
    return v >= 10 ? QLocale(QLocale::English).toString(qlonglong(std::floor(v))) : QString::number(v, 'f', 2);
}

} // namespace

ConcurrencyChart::ConcurrencyChart(QWidget* parent)
    : ChartWidget(parent)
{
    m_line = m_plot->addGraph();
    m_line->setName(QStringLiteral("Max concurrency"));
    m_current = m_plot->addGraph();
    m_current->setName(QStringLiteral("This scenario"));
    m_current->setLineStyle(QCPGraph::lsNone);
    m_plot->xAxis->setLabel(QStringLiteral("tokens per request"));
    m_plot->yAxis->setLabel(QStringLiteral("concurrent requests"));
    for (QCPAxis* axis : { m_plot->xAxis, m_plot->yAxis }) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        axis->setNumberFormat(QStringLiteral("f"));
        axis->setNumberPrecision(axis == m_plot->yAxis ? 2 : 0);
    }
    QSharedPointer<TokenTicker> tokens(new TokenTicker);
    tokens->setLogBase(2);
    tokens->setSubTickCount(0);
    m_plot->xAxis->setTicker(tokens);
    m_plot->yAxis->setTicker(logTicker(10));
    m_plot->legend->setVisible(false); // the point and the line say what they are: the room is the curve's
    connect(m_plot, &QCustomPlot::afterLayout, this, &ConcurrencyChart::placeMark);
    setTheme(m_theme);
}

void ConcurrencyChart::placeMark()
{
    if (!m_mark)
        return;
    // Beside the point, toward the middle of the plot, moved in where the plot is narrower than that.
    const double at = m_plot->xAxis->coordToPixel(double(m_curve.current.context));
    const QRect inside = m_plot->axisRect()->rect();
    const double width = textItemRect(m_mark).width(), gap = 6;
    const bool right = at > inside.center().x();
    const double left = std::clamp(right ? at - gap - width : at + gap, double(inside.left()),
        std::max(double(inside.left()), double(inside.right()) - width));
    m_mark->setTextAlignment(right ? Qt::AlignRight : Qt::AlignLeft);
    m_mark->position->setCoords(m_plot->xAxis->pixelToCoord(left), m_mark->position->value());
}

void ConcurrencyChart::resizeEvent(QResizeEvent* event)
{
    ChartWidget::resizeEvent(event);
    // One tick label per ~90 pixels ("128k" and its gap): more overprint each other on a narrow tab.
    if (auto log = m_plot->xAxis->ticker().dynamicCast<QCPAxisTickerLog>())
        log->setTickCount(std::clamp(width() / 90, 2, 8));
}

void ConcurrencyChart::recolour()
{
    m_line->setPen(QPen(PlotTheme::roleColor(ColourRole::ReddishPurple), m_theme.lineWidth * 1.5));
    m_current->setPen(QPen(m_theme.foreground, m_theme.lineWidth));
    m_current->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, m_theme.foreground,
        PlotTheme::roleColor(ColourRole::Orange), m_theme.fontPointSize * 1.4));
}

void ConcurrencyChart::setCurve(ConcurrencyCurve curve)
{
    m_curve = std::move(curve);
    rebuild();
}

void ConcurrencyChart::rebuild()
{
    m_plot->clearItems();
    m_mark = nullptr;
    QVector<double> xs, ys;
    double yLo = 0.5, yHi = 2;
    for (const ConcurrencyPoint& p : m_curve.points)
        if (p.concurrency > 0) { // no cache at all has no place on a log axis
            xs << double(p.context);
            ys << p.concurrency;
            yLo = std::min(yLo, p.concurrency);
            yHi = std::max(yHi, p.concurrency);
        }
    m_line->setData(xs, ys, true);
    const ConcurrencyPoint& c = m_curve.current;
    if (c.concurrency > 0)
        m_current->setData({ double(c.context) }, { c.concurrency }, true);
    else
        m_current->data()->clear();
    if (!xs.isEmpty()) {
        m_plot->xAxis->setRange(xs.front() / 1.2, xs.back() * 1.2);
        m_plot->yAxis->setRange(yLo / 2, yHi * 3);
        // One request: below it vLLM refuses to start (max_model_len larger than the cache).
        auto* one = new QCPItemStraightLine(m_plot);
        one->setPen(QPen(m_theme.overflow, m_theme.lineWidth, Qt::DashLine));
        one->point1->setCoords(xs.front(), 1);
        one->point2->setCoords(xs.back(), 1);
        auto* oneText = new QCPItemText(m_plot);
        oneText->setPositionAlignment(Qt::AlignBottom | Qt::AlignLeft);
        oneText->position->setCoords(xs.front(), 1);
        oneText->setText(QStringLiteral(" 1 request"));
        oneText->setColor(m_theme.overflow);
        oneText->setFont(m_theme.font(-1));
        if (c.concurrency > 0) {
            m_mark = new QCPItemText(m_plot);
            // On the point's side of the one-request line, whose label stands above it; placeMark()
            // keeps it inside the plot once the axes are laid out.
            const bool below = c.concurrency < 1;
            m_mark->setPositionAlignment((below ? Qt::AlignTop : Qt::AlignBottom) | Qt::AlignLeft);
            m_mark->position->setCoords(double(c.context), below ? c.concurrency / 1.3 : c.concurrency * 1.3);
            // Two short lines: one long line ran past the plot's edge at the Serving tab's narrowest.
            m_mark->setText(
                QStringLiteral("%1×\nat %2 tokens")
                    .arg(countText(c.concurrency), QLocale(QLocale::English).toString(qlonglong(c.context))));
            m_mark->setColor(m_theme.foreground);
            m_mark->setFont(m_theme.font(1));
        }
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace vramlab
