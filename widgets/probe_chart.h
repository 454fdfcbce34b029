// SPDX-License-Identifier: MIT
#pragma once

#include "chart_widget.h"
#include "vramlab/probe_report.h"

#include <QString>
#include <QVector>

class QCPBars;

namespace vramlab {

/// Predicted beside measured: per component in GiB for a `fit` report, per GEMM shape in
/// TFLOP/s for a `bench` report (the catalog's peak as a dashed line).
class ProbeChart : public ChartWidget {
    Q_OBJECT
public:
    explicit ProbeChart(QWidget* parent = nullptr);
    void setReport(const ProbeReport& report);
    void clear();

    /// Plotted values (for tests): the category labels and the two series.
    const QStringList& categories() const { return m_labels; }
    const QVector<double>& predicted() const { return m_predicted; }
    const QVector<double>& measured() const { return m_measured; }

protected:
    void recolour() override;
    void rebuild() override;

private:
    QCPBars* m_predictedBars;
    QCPBars* m_measuredBars;
    QStringList m_labels;
    QVector<double> m_predicted, m_measured;
    double m_peakLine = 0; ///< TFLOP/s in a bench chart
    QString m_unit;
};

} // namespace vramlab
