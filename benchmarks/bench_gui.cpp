// SPDX-License-Identifier: MIT
// What the user sees when dragging a slider in the real window (offscreen platform): each
// iteration is one step of a drag that changes the scenario, timed from the moment the
// input is queued (as a mouse move arrives) until the window has finished painting what it
// changed, with no extra forced redraw. Reported per page: median, 90th percentile and
// worst move (counters p50_ms, p90_ms, max_ms), and how many moves changed the scenario.
//
// Start-up: BM_StartupFirstPaint times constructing the window, showing it and its first
// paint (the part of a launch the app controls; the process start is in the README).
#include "main_window.h"
#include "page.h"
#include "parameter_descriptors.h"
#include "parameter_panel.h"
#include "scenario_document.h"

#include <QApplication>
#include <QSlider>
#include <QTabWidget>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <vector>

using namespace vramlab;
using Clock = std::chrono::steady_clock;

namespace {

/// Notes when a paint ends: QEvent::UpdateRequest is the window painting its dirty widgets
/// and flushing them; a direct Paint (repaint()) counts too.
class TimedApp : public QApplication {
public:
    using QApplication::QApplication;
    bool notify(QObject* receiver, QEvent* event) override
    {
        ++delivered;
        const QEvent::Type type = event->type();
        // VRAMLAB_BENCH_TRACE=1: which widgets a move resizes or re-lays out (what to fix next).
        if (trace && (type == QEvent::Resize || type == QEvent::LayoutRequest))
            std::fprintf(stderr, "%s %s %s in %s %s\n", type == QEvent::Resize ? "resize" : "layout",
                receiver->metaObject()->className(), qPrintable(receiver->objectName()),
                receiver->parent() ? receiver->parent()->metaObject()->className() : "-",
                receiver->parent() ? qPrintable(receiver->parent()->objectName()) : "");
        const bool result = QApplication::notify(receiver, event);
        if (type == QEvent::UpdateRequest || type == QEvent::Paint) {
            lastPaintEnd = Clock::now();
            ++paints;
        }
        return result;
    }
    const bool trace = qEnvironmentVariableIsSet("VRAMLAB_BENCH_TRACE");
    quint64 delivered = 0;
    quint64 paints = 0;
    Clock::time_point lastPaintEnd;
};

TimedApp* timedApp()
{
    return static_cast<TimedApp*>(QCoreApplication::instance());
}

/// Runs the event loop until two passes in a row deliver nothing: every queued replot,
/// layout and paint the input caused has happened.
void settle()
{
    int idle = 0;
    const Clock::time_point limit = Clock::now() + std::chrono::seconds(2);
    while (idle < 2 && Clock::now() < limit) {
        const quint64 before = timedApp()->delivered;
        QApplication::processEvents(QEventLoop::AllEvents);
        QApplication::sendPostedEvents(); // deferred deletes and the like
        idle = timedApp()->delivered == before ? idle + 1 : 0;
    }
}

/// CPU time of the whole process (every thread: Qt paints big areas on a thread pool). On
/// a machine other work shares, it changes less than the time on the clock.
double processCpuSeconds()
{
    timespec t {};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const size_t i = std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5));
    return v[i];
}

/// Slider positions in [lo, hi] (values) at which the value differs from the position
/// before: a drag across them changes the scenario at each step (a size slider has one
/// position per stop, so every position does).
std::vector<int> changingPositions(const QString& key, double lo, double hi)
{
    const ParamDescriptor& d = *findDescriptor(key);
    std::vector<int> out;
    double previous = -1;
    const int last = ParameterPanel::sliderSteps(d);
    for (int pos = 0; pos <= last; ++pos) {
        const double v = ParameterPanel::sliderValue(d, pos);
        if (v != previous && v >= lo && v <= hi)
            out.push_back(pos);
        previous = v;
    }
    return out;
}

struct Drag {
    const char* page;
    const char* key;
    double lo, hi; ///< the values the drag goes back and forth between
    const char* scenarioFile = nullptr; ///< under resources/scenarios, else the default scenario
};

void sliderDrag(benchmark::State& state, const Drag& drag)
{
    MainWindow window;
    if (drag.scenarioFile) {
        if (!window.openFile(
                QStringLiteral(VRAMLAB_SOURCE_DIR "/resources/scenarios/") + QLatin1String(drag.scenarioFile)))
            return state.SkipWithError("the scenario did not open");
    }
    window.resize(1400, 900);
    window.show();
    window.tabs()->setCurrentWidget(window.page(QString::fromLatin1(drag.page)));
    settle();
    QSlider* slider = window.panel()->slider(QString::fromLatin1(drag.key));
    const std::vector<int> positions = changingPositions(QString::fromLatin1(drag.key), drag.lo, drag.hi);
    if (!slider || positions.size() < 2 || !slider->isEnabled())
        return state.SkipWithError("no slider to drag on this page");
    slider->setFocus(); // nothing else blinks a cursor while the drag is timed
    slider->setSliderDown(true); // the handle is held: what follows is one drag
    settle();

    std::vector<double> ms, cpuMs;
    int changed = 0;
    size_t i = 0;
    int direction = 1;
    for (auto _ : state) {
        // Back and forth across the positions where the value changes.
        if (i + direction >= positions.size() || (direction < 0 && i == 0))
            direction = -direction;
        i += direction;
        const int pos = positions[i];
        const QVariant before = window.document()->parameter(QString::fromLatin1(drag.key));
        const quint64 paints = timedApp()->paints;
        const double cpu0 = processCpuSeconds();
        const Clock::time_point t0 = Clock::now();
        // The move arrives as an event in the queue, as a mouse move does.
        QMetaObject::invokeMethod(
            slider, [slider, pos] { slider->setSliderPosition(pos); }, Qt::QueuedConnection);
        settle();
        cpuMs.push_back((processCpuSeconds() - cpu0) * 1e3);
        const Clock::time_point end = timedApp()->paints > paints ? timedApp()->lastPaintEnd : Clock::now();
        const double seconds = std::chrono::duration<double>(end - t0).count();
        state.SetIterationTime(seconds);
        ms.push_back(seconds * 1e3);
        changed += window.document()->parameter(QString::fromLatin1(drag.key)) != before;
    }
    slider->setSliderDown(false);
    state.counters["p50_ms"] = percentile(ms, 0.5);
    state.counters["p90_ms"] = percentile(ms, 0.9);
    state.counters["max_ms"] = percentile(ms, 1.0);
    state.counters["cpu_p50_ms"] = percentile(cpuMs, 0.5);
    state.counters["cpu_p90_ms"] = percentile(cpuMs, 0.9);
    state.counters["changed_pct"] = ms.empty() ? 0 : 100.0 * changed / double(ms.size());
}

void BM_DragBreakdown(benchmark::State& state)
{
    sliderDrag(state, { "breakdownPage", "run.sequence_length", 512, 65536 });
}
void BM_DragSweep(benchmark::State& state)
{
    sliderDrag(state, { "sweepPage", "run.micro_batch_size", 1, 64 });
}
void BM_DragCompare(benchmark::State& state)
{
    sliderDrag(state, { "comparePage", "run.sequence_length", 512, 65536 });
}
void BM_DragExplain(benchmark::State& state)
{
    sliderDrag(state, { "explainPage", "run.parallelism.gpus", 8, 1024 });
}
void BM_DragTimeline(benchmark::State& state)
{
    sliderDrag(state, { "timelinePage", "run.sequence_length", 512, 65536 });
}
void BM_DragPlan(benchmark::State& state)
{
    sliderDrag(state, { "planPage", "run.sequence_length", 512, 65536 });
}
void BM_DragProbe(benchmark::State& state)
{
    sliderDrag(state, { "probePage", "run.sequence_length", 512, 65536 });
}
void BM_DragServing(benchmark::State& state)
{
    sliderDrag(state, { "servingPage", "run.serving.max_model_len", 512, 32768, "llama-3.1-8b-vllm-rtx3090.json" });
}

/// Constructing the window, showing it and its first finished paint.
void BM_StartupFirstPaint(benchmark::State& state)
{
    std::vector<double> ms, cpuMs;
    for (auto _ : state) {
        const quint64 paints = timedApp()->paints;
        const double cpu0 = processCpuSeconds();
        const Clock::time_point t0 = Clock::now();
        auto* window = new MainWindow;
        window->show();
        while (timedApp()->paints == paints)
            QApplication::processEvents();
        const double seconds = std::chrono::duration<double>(timedApp()->lastPaintEnd - t0).count();
        cpuMs.push_back((processCpuSeconds() - cpu0) * 1e3);
        state.SetIterationTime(seconds);
        ms.push_back(seconds * 1e3);
        state.PauseTiming();
        settle();
        delete window;
        settle();
        state.ResumeTiming();
    }
    state.counters["p50_ms"] = percentile(ms, 0.5);
    state.counters["p90_ms"] = percentile(ms, 0.9);
    state.counters["cpu_p50_ms"] = percentile(cpuMs, 0.5);
}

constexpr int kMoves = 60;

} // namespace

BENCHMARK(BM_DragBreakdown)->UseManualTime()->Iterations(kMoves)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DragSweep)->UseManualTime()->Iterations(kMoves)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DragCompare)->UseManualTime()->Iterations(kMoves)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DragExplain)->UseManualTime()->Iterations(kMoves)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DragTimeline)->UseManualTime()->Iterations(kMoves)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DragPlan)->UseManualTime()->Iterations(kMoves)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DragProbe)->UseManualTime()->Iterations(kMoves)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DragServing)->UseManualTime()->Iterations(kMoves)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StartupFirstPaint)->UseManualTime()->Iterations(10)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    TimedApp app(argc, argv);
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    return 0;
}
