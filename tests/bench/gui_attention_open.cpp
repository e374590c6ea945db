// Opening a large attention file in the desktop application (not a test: it prints figures).
//
// Writes a 12 x 12 x 512 x 512 float16 .npy (72 MiB; heads attending to the previous token,
// the first token, a local window or broadly) into a temporary folder, opens it in the real
// MainWindow with the model view in front, and measures, from the open until the model view
// and the statistics table are filled (and until the rollout is), the longest gap of the GUI
// event loop (a 1 ms timer records the largest interval between its ticks) and the process's
// peak resident memory (VmHWM) against the file's size.
//
//   gui_attention_open [layers heads tokens]     (QT_QPA_PLATFORM=offscreen or under xvfb-run)
//   gui_attention_open --dump DIR                 (an attnscope-qk dump instead, opened as it is:
//                                                  tests/bench/make_large_dump.py writes one)

#include "app/gui/sources/SetSource.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/PooledHeatmapView.h"
#include "app/gui/views/RolloutView.h"
#include "app/gui/views/StatsTable.h"
#include "core/formats/QkDump.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTimer>

#include <Eigen/Core>

#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using namespace attnscope;

namespace {

// kB from /proc/self/status ("VmHWM:", "VmRSS:"); 0 where there is no /proc.
long statusKb(const char *key)
{
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0)
            return std::atol(line.c_str() + std::strlen(key));
    return 0;
}

// A float16 .npy of attention-like maps, written one map at a time (never the whole array).
bool writeAttention(const QString &path, int layers, int heads, int tokens)
{
    std::string header = "{'descr': '<f2', 'fortran_order': False, 'shape': (" + std::to_string(layers) + ", " +
                         std::to_string(heads) + ", " + std::to_string(tokens) + ", " + std::to_string(tokens) + "), }";
    while ((10 + header.size() + 1) % 64 != 0)
        header += ' ';
    header += '\n';
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return false;
    const char magic[] = "\x93NUMPY\x01\x00";
    f.write(magic, 8);
    const auto length = static_cast<std::uint16_t>(header.size());
    const char lengthBytes[2] = {char(length & 0xff), char(length >> 8)};
    f.write(lengthBytes, 2);
    f.write(header.data(), qint64(header.size()));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> noise(0.0f, 1.0f);
    std::vector<float> row(std::size_t(tokens), 0.0f);
    std::vector<Eigen::half> map(std::size_t(tokens) * std::size_t(tokens));
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h) {
            const int kind = (l + h) % 4;
            for (int i = 0; i < tokens; ++i) {
                float sum = 0.0f;
                for (int j = 0; j < tokens; ++j) {
                    float w = j <= i ? 0.02f * noise(rng) : 0.0f; // causal
                    if (kind == 0 && j == std::max(i - 1, 0))
                        w += 4.0f; // previous token
                    else if (kind == 1 && j == 0)
                        w += 4.0f; // first token
                    else if (kind == 2 && j <= i && i - j < 8)
                        w += 1.0f; // local window
                    else if (kind == 3 && j <= i)
                        w += 0.05f; // broad
                    row[std::size_t(j)] = w;
                    sum += w;
                }
                for (int j = 0; j < tokens; ++j)
                    map[std::size_t(i) * std::size_t(tokens) + std::size_t(j)] = Eigen::half(row[std::size_t(j)] / sum);
            }
            f.write(reinterpret_cast<const char *>(map.data()), qint64(map.size() * sizeof(Eigen::half)));
        }
    return f.error() == QFileDevice::NoError;
}

// Times every event the GUI thread handles at the top level: the longest one is the GUI
// thread's own work (a stall the scheduler adds on a loaded machine is not in it).
class TimedApplication : public QApplication
{
public:
    using QApplication::QApplication;
    bool notify(QObject *receiver, QEvent *event) override
    {
        if (m_depth > 0 || !m_timing)
            return QApplication::notify(receiver, event);
        // Before notify(): a deferred delete takes the receiver with it.
        const char *className = receiver->metaObject()->className();
        const int type = int(event->type());
        ++m_depth;
        QElapsedTimer t;
        t.start();
        const bool r = QApplication::notify(receiver, event);
        const double ms = double(t.nsecsElapsed()) / 1e6;
        --m_depth;
        if (ms > longest) {
            longest = ms;
            longestWhat = QStringLiteral("%1 to %2").arg(type).arg(QString::fromLatin1(className));
        }
        return r;
    }
    void setTiming(bool on) { m_timing = on; }
    double longest = 0.0;
    QString longestWhat;

private:
    int m_depth = 0;
    bool m_timing = false;
};

} // namespace

int main(int argc, char **argv)
{
    TimedApplication app(argc, argv);
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeBench"));
    QCoreApplication::setApplicationName(QStringLiteral("gui_attention_open"));
    const bool dump = argc > 2 && std::strcmp(argv[1], "--dump") == 0;
    int layers = argc > 3 ? std::max(1, std::atoi(argv[1])) : 12;
    int heads = argc > 3 ? std::max(1, std::atoi(argv[2])) : 12;
    int tokens = argc > 3 ? std::max(2, std::atoi(argv[3])) : 512;
    QTemporaryDir dir;
    QString path = dir.filePath(QStringLiteral("attentions.npy"));
    double fileMiB = 0.0;
    if (dump) {
        path = QString::fromLocal8Bit(argv[2]);
        auto opened = QkDump::open(path.toStdString());
        if (!opened) {
            std::fprintf(stderr, "%s\n", opened.message().c_str());
            return 1;
        }
        layers = opened->layers();
        heads = opened->facts(0).heads;
        tokens = int(opened->queries());
        fileMiB = double(opened->fileBytes()) / (1024.0 * 1024.0);
    } else {
        if (!writeAttention(path, layers, heads, tokens)) {
            std::fprintf(stderr, "could not write %s\n", qPrintable(path));
            return 1;
        }
        fileMiB = double(QFile(path).size()) / (1024.0 * 1024.0);
    }

    MainWindow w;
    w.resize(1440, 900);
    w.show();
    w.views()->tabs()->setCurrentWidget(w.views()->modelView());
    w.computeController()->waitForIdle(60000);
    QElapsedTimer settle;
    settle.start();
    while (settle.elapsed() < 300)
        app.processEvents(QEventLoop::AllEvents, 50);
    const long rssBeforeKb = statusKb("VmRSS:");

    QElapsedTimer tick, total;
    double stall = 0.0, stallUntilFilled = 0.0, longestUntilFilled = 0.0;
    double filledMs = -1.0, rolloutMs = -1.0, layerMs = -1.0;
    QTimer heartbeat;
    heartbeat.setTimerType(Qt::PreciseTimer);
    heartbeat.setInterval(1);
    QObject::connect(&heartbeat, &QTimer::timeout, [&] {
        stall = std::max(stall, double(tick.nsecsElapsed()) / 1e6);
        tick.restart();
    });
    auto check = [&] {
        const double now = double(total.nsecsElapsed()) / 1e6;
        if (filledMs < 0 && w.views()->modelView()->isFilled() && w.views()->statsTable()->isFilled()) {
            w.views()->modelView()->viewport()->repaint(); // the tiles as the user sees them
            filledMs = double(total.nsecsElapsed()) / 1e6;
            stallUntilFilled = stall;
            longestUntilFilled = app.longest;
        }
        if (rolloutMs < 0 && w.views()->rolloutView()->isFilled())
            rolloutMs = now;
        if (layerMs < 0 && w.shownAttention().heads() == heads && w.setSource())
            layerMs = now;
        // A long file shows its heads pooled: the first whole-map tile stands for the layer.
        if (layerMs < 0 && w.setSource() && w.setSource()->isLong() && w.views()->filePooled()->visibleTile())
            layerMs = now;
        if (filledMs >= 0 && rolloutMs >= 0 && layerMs >= 0)
            app.quit();
    };
    QObject::connect(w.views(), &AttentionViews::setViewsUpdated, check);
    QObject::connect(&w, &MainWindow::attentionShown, check);
    QObject::connect(w.views()->filePooled(), &PooledHeatmapView::visibleTileReady, check);
    QObject::connect(&w, &MainWindow::openFailed, [&](const QString &, const QString &message) {
        std::fprintf(stderr, "open failed: %s\n", qPrintable(message));
        app.exit(1);
    });
    QTimer::singleShot(dump ? 1800000 : 120000, &app, [&] { app.exit(2); });
    app.setTiming(true);
    total.start();
    tick.start();
    heartbeat.start();
    w.openFile(path);
    const int rc = app.exec();
    heartbeat.stop();
    const double hwmMiB = double(statusKb("VmHWM:")) / 1024.0;
    if (dump)
        std::printf("Q/K dump of %d layers x %d heads, %d tokens, %.1f MiB of layer files (mapped)\n", layers, heads,
                    tokens, fileMiB);
    else
        std::printf("attention file %d x %d x %d x %d float16, %.1f MiB (%s)\n", layers, heads, tokens, tokens, fileMiB,
                    w.setSource() && w.setSource()->attention()->file->mapped ? "mapped" : "copied");
    std::printf("open -> heads of layer 1 shown (%s): %8.1f ms\n", w.setSource()->isLong() ? "pooled" : "grid  ",
                layerMs);
    std::printf("open -> model view and statistics filled:   %8.1f ms   longest GUI stall %6.1f ms\n", filledMs,
                stallUntilFilled);
    std::printf("open -> rollout filled:                     %8.1f ms   longest GUI stall %6.1f ms\n", rolloutMs,
                stall);
    if (!w.views()->rolloutView()->error().isEmpty())
        std::printf("rollout refused: %s\n", qPrintable(w.views()->rolloutView()->error()));
    std::printf("longest single GUI-thread event: %.1f ms until filled, %.1f ms until the rollout (event %s)\n",
                longestUntilFilled, app.longest, qPrintable(app.longestWhat));
    std::printf("resident memory: %.1f MiB before the open, peak %.1f MiB (%.2f x the file; %.2f x counting only "
                "the growth)\n",
                double(rssBeforeKb) / 1024.0, hwmMiB, hwmMiB / fileMiB,
                (hwmMiB - double(rssBeforeKb) / 1024.0) / fileMiB);
    // A mapped file's pages count as resident once read, yet they are the page cache's, shared
    // and dropped under pressure: the anonymous part is what the application itself holds.
    std::printf("resident at the end: %.1f MiB anonymous, %.1f MiB file-backed (the mapping and libraries)\n",
                double(statusKb("RssAnon:")) / 1024.0, double(statusKb("RssFile:")) / 1024.0);
    malloc_trim(0); // what the allocator kept of freed memory for reuse, given back
    std::printf("anonymous after malloc_trim: %.1f MiB (what the window still holds)\n",
                double(statusKb("RssAnon:")) / 1024.0);
    return rc;
}
