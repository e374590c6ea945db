// Edit-to-repaint time of the desktop application (not a test: it prints figures).
//
// For each size, a MainWindow shows the project; one cell of X is edited through the
// document, and the time is taken until the new result is on every view and the visible
// heatmaps have repainted. A 2 ms timer on the GUI thread measures the longest stall of the
// event loop meanwhile: the computation runs on the worker, so the window must not freeze.
//
//   gui_edit_to_repaint [iterations]      (QT_QPA_PLATFORM=offscreen or under xvfb-run)

#include "app/engine/ProcessSetup.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/MainWindow.h"
#include "core/attention/RandomProblem.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QUndoStack>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <vector>

using namespace attnscope;

namespace {

struct Size {
    const char *name;
    int tokens;
    int modelDim;
    int heads;
    // design.md's modern attention on top: key/value heads H/2, RoPE, a causal window of T/4,
    // a soft-cap and sinks (every extra step of the engines at once).
    bool modern = false;
};

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

void run(const Size &size, int iterations, const QString &dir)
{
    RandomProblemOptions o;
    o.tokens = size.tokens;
    o.modelDim = size.modelDim;
    o.heads = size.heads;
    o.seed = 7;
    Project p = randomProject(o);
    p.title = size.name;
    if (size.modern) {
        AttentionProblem &pr = p.problem;
        const int kv = std::max(1, size.heads / 2), dk = pr.spec.headDimQK, dv = pr.spec.headDimV;
        pr.spec.kvHeads = kv;
        pr.weights.k = MatrixF(pr.weights.k.leftCols(Eigen::Index(kv) * dk));
        pr.weights.v = MatrixF(pr.weights.v.leftCols(Eigen::Index(kv) * dv));
        if (pr.weights.kBias)
            pr.weights.kBias = VectorF(pr.weights.kBias->head(Eigen::Index(kv) * dk));
        if (pr.weights.vBias)
            pr.weights.vBias = VectorF(pr.weights.vBias->head(Eigen::Index(kv) * dv));
        if (dk % 2 == 0)
            pr.spec.rope = RopeSpec{};
        pr.spec.softcap = 30.0;
        pr.weights.sinks = VectorF::Constant(size.heads, 0.5f);
        pr.mask.causal = true;
        pr.mask.window = std::max(1, size.tokens / 4);
    }
    Document tmp(p);
    const QString path = dir + QStringLiteral("/bench.attnscope.json");
    if (!tmp.save(path).ok())
        return;

    MainWindow w;
    w.resize(1440, 900);
    w.show();
    if (!w.openFile(path))
        return;
    w.computeController()->waitForIdle(120000);

    std::vector<double> total, compute;
    double worstStall = 0.0;
    for (int it = 0; it < iterations; ++it) {
        QElapsedTimer tick;
        double stall = 0.0;
        QTimer heartbeat;
        heartbeat.setInterval(2);
        QObject::connect(&heartbeat, &QTimer::timeout, [&] {
            stall = std::max(stall, double(tick.nsecsElapsed()) / 1e6);
            tick.restart();
        });
        QEventLoop loop;
        ComputedTracePtr shown;
        auto c = QObject::connect(&w, &MainWindow::resultShown, [&](ComputedTracePtr r) {
            shown = r;
            loop.quit();
        });
        QElapsedTimer timer;
        timer.start();
        tick.start();
        heartbeat.start();
        w.document()->setValue(MatrixId::Xq, it % size.tokens, 0, float(it) * 0.01f + 0.5f);
        loop.exec();
        // The visible views paint synchronously.
        w.views()->grid()->repaint();
        w.views()->headView()->repaint();
        const double ms = double(timer.nsecsElapsed()) / 1e6;
        heartbeat.stop();
        QObject::disconnect(c);
        total.push_back(ms);
        compute.push_back(shown ? shown->milliseconds : 0.0);
        worstStall = std::max(worstStall, stall);
    }
    // Paint alone, for the record.
    QElapsedTimer paint;
    paint.start();
    w.views()->grid()->repaint();
    w.views()->headView()->repaint();
    const double paintMs = double(paint.nsecsElapsed()) / 1e6;
    std::printf(
        "%-10s T=%-5d d=%-4d H=%-3d  edit-to-repaint median %8.2f ms (min %8.2f, max %8.2f)  compute median %8.2f ms  "
        "repaint %7.2f ms  longest GUI-thread stall %7.2f ms  [%s]\n",
        size.name, size.tokens, size.modelDim, size.heads, median(total), *std::min_element(total.begin(), total.end()),
        *std::max_element(total.begin(), total.end()), median(compute), paintMs, worstStall,
        qPrintable(w.currentResult() ? w.currentResult()->backendName : QStringLiteral("?")));
    std::fflush(stdout);
    w.document()->undoStack()->setClean();
}

} // namespace

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeBench"));
    QCoreApplication::setApplicationName(QStringLiteral("gui_edit_to_repaint"));
    const int iterations = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
    QTemporaryDir dir;
    const Size sizes[] = {{"tutorial", 3, 4, 1},
                          {"teaching", 16, 64, 4},
                          {"teaching*", 16, 64, 4, true},
                          {"teaching+", 64, 256, 16},
                          {"teaching+*", 64, 256, 16, true},
                          {"inspection", 1024, 512, 8},
                          {"inspect.*", 1024, 512, 8, true}};
    std::printf("Rows marked * add key/value heads H/2, RoPE, a causal window of T/4, a soft-cap and sinks\n");
    std::printf("Backend: automatic (GPU if available, else CPU); %d edits per size\n", iterations);
    for (const Size &s : sizes)
        run(s, s.tokens >= 1024 ? std::max(3, iterations / 4) : iterations, dir.path());
    return 0;
}
