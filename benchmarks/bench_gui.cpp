// SPDX-License-Identifier: MIT
// A slider move in the real window, offscreen: recompute, update every visible view and
// repaint the chart (target: within one 60 Hz frame, 16.7 ms, on the 2-core machine).
#include "main_window.h"
#include "parameter_descriptors.h"
#include "parameter_panel.h"
#include "qcustomplot_include.h"
#include "stacked_bar_chart.h"
#include "sweep_chart.h"
#include "timeline_chart.h"

#include <QApplication>
#include <QSlider>
#include <QTabWidget>

#include <benchmark/benchmark.h>

using namespace vramlab;

namespace {

void sliderSweep(benchmark::State& state, int tab, const char* key)
{
    vramlab::MainWindow window;
    window.resize(1400, 900);
    window.show();
    window.tabs()->setCurrentIndex(tab);
    QApplication::processEvents();
    QSlider* slider = window.panel()->slider(QString::fromLatin1(key));
    QCustomPlot* plot = tab == 1 ? window.sweepChart()->plot()
        : tab == 4               ? window.timelineChart()->plot()
                                 : window.chart()->plot();
    int pos = slider->minimum();
    for (auto _ : state) {
        pos = pos >= slider->maximum() ? slider->minimum() : pos + 1;
        slider->setValue(pos); // one step of a drag: edit, recompute, update views
        QApplication::processEvents(); // the queued replot and repaints
        plot->replot(QCustomPlot::rpImmediateRefresh); // make sure a frame was drawn
    }
}

void BM_SliderBreakdownTab(benchmark::State& state)
{
    sliderSweep(state, 0, "run.sequence_length");
}
void BM_SliderSweepTab(benchmark::State& state)
{
    sliderSweep(state, 1, "run.micro_batch_size");
}
void BM_SliderExplainTab(benchmark::State& state)
{
    sliderSweep(state, 3, "run.parallelism.gpus");
}
void BM_SliderTimelineTab(benchmark::State& state)
{
    sliderSweep(state, 4, "run.sequence_length");
}
/// Plan tab: three fit searches and the planner (433 setups for the default scenario) per move.
void BM_SliderPlanTab(benchmark::State& state)
{
    sliderSweep(state, 5, "run.sequence_length");
}

} // namespace

BENCHMARK(BM_SliderBreakdownTab)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SliderSweepTab)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SliderExplainTab)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SliderTimelineTab)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SliderPlanTab)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    return 0;
}
