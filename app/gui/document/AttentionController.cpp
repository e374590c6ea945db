#include "app/gui/document/AttentionController.h"

#include "core/formats/QkDump.h"

#include "app/render/ErrorText.h"
#include "core/analysis/RowSums.h"
#include "core/attention/Validation.h"
#include "core/io/MemoryLimits.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>

#include <algorithm>
#include <new>

namespace attnscope {

AttentionController::AttentionController(QObject *parent) : QObject(parent)
{
    qRegisterMetaType<LoadedAttentionPtr>();
}

AttentionController::~AttentionController()
{
    cancelAll();
}

void AttentionController::cancelAll()
{
    for (JobLane &lane : m_lanes)
        lane.cancel();
}

bool AttentionController::isBusy() const
{
    return std::any_of(std::begin(m_lanes), std::end(m_lanes), [](const JobLane &lane) { return lane.isBusy(); });
}

bool AttentionController::waitForIdle(int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    while (isBusy() && timer.elapsed() < timeoutMs)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    return !isBusy();
}

void AttentionController::start(Kind kind, std::function<std::function<void()>(const std::atomic<bool> &)> work)
{
    m_lanes[kind].submit([this, kind, work = std::move(work)](JobState &state) -> JobLane::Deliver {
        try {
            return work(state.cancel);
        } catch (const std::bad_alloc &) {
            return [this, kind] {
                const QString message = tr("Not enough memory for this attention file.");
                if (kind == Open)
                    emit openFailed(QString(), message, ErrorKind::OutOfMemory);
                else if (kind == Rollout)
                    emit rolloutReady(nullptr, {}, {}, message);
                else
                    emit jobFailed(message);
            };
        }
    });
}

std::function<void()> AttentionController::changedSource(AttentionController *self, const AttentionSet &set)
{
    const Status s = set.checkSource();
    if (s)
        return {};
    const QString message = errorText(s.error());
    return [self, message] { emit self->sourceChanged(message); };
}

void AttentionController::open(const QString &path)
{
    start(Open, [this, path](const std::atomic<bool> &) -> std::function<void()> {
        auto loaded = std::make_shared<LoadedAttention>();
        loaded->path = QFileInfo(path).absoluteFilePath();
        AttentionFileInfo info;
        auto set = QkDump::isDump(path.toStdString()) ? readQkDumpSet(path.toStdString(), &info)
                                                      : readAttentionFile(path.toStdString(), &info);
        loaded->file = info;
        if (!set) {
            const QString message = QString::fromStdString(set.message());
            const ErrorKind kind = set.error().kind;
            return [this, path, message, kind] { emit openFailed(path, message, kind); };
        }
        loaded->set = std::move(*set);
        return [this, loaded = LoadedAttentionPtr(std::move(loaded))] { emit opened(loaded); };
    });
}

void AttentionController::applySoftmax(LoadedAttentionPtr scores)
{
    start(Open, [this, scores](const std::atomic<bool> &) -> std::function<void()> {
        auto soft = softmaxRows(scores->set);
        if (!soft) {
            const QString message = errorText(soft.error());
            const ErrorKind kind = soft.error().kind;
            return [this, path = scores->path, message, kind] { emit openFailed(path, message, kind); };
        }
        auto loaded = std::make_shared<LoadedAttention>(*scores);
        loaded->set = std::move(*soft);
        loaded->softmaxApplied = true;
        return [this, loaded = LoadedAttentionPtr(std::move(loaded))] { emit opened(loaded); };
    });
}

void AttentionController::requestLayer(const ShownAttention &source, int layer)
{
    start(Layer,
          [this, source, layer, host = m_host,
           budget = m_budget](const std::atomic<bool> &cancel) -> std::function<void()> {
              ShownAttention shown = source;
              shown.layer = std::clamp(layer, 0, std::max(1, source.set.layers()) - 1);
              QString why;
              shown.tensors = computeTensors(host.get(), source, shown.layer, budget, cancel, &why);
              if (!shown.tensors) {
                  auto maps = readLayer(source, layer, &cancel);
                  if (!maps)
                      return {};
                  std::const_pointer_cast<LayerMaps>(maps)->noTensors = why;
                  shown.maps = std::move(maps);
              }
              if (auto changed = changedSource(this, source.set))
                  return changed;
              return [this, shown] { emit layerReady(shown); };
          });
}

std::shared_ptr<const LayerTensors> AttentionController::computeTensors(BackendHost *host, const ShownAttention &source,
                                                                        int layer, const MemoryBudget &budget,
                                                                        const std::atomic<bool> &cancel, QString *why)
{
    if (!source.provider || source.set.isEmpty())
        return nullptr;
    if (source.merges()) {
        *why = tr("The steps are those of tokens, and words are merged: turn off View > Merge Sub-word Tokens "
                  "into Words to see them.");
        return nullptr;
    }
    const std::int64_t allowed = budget.bytes();
    try {
        auto tensors = std::make_shared<LayerTensors>();
        tensors->project = source.provider->layerProject(layer);
        tensors->layer = layer;
        if (const std::int64_t need = traceBytes(tensors->project.problem); need > allowed) {
            *why = tr("The steps of this layer need %1 for its tensors; the memory budget allows %2.")
                       .arg(QString::fromStdString(formatBytes(need)), QString::fromStdString(formatBytes(allowed)));
            return nullptr;
        }
        if (!host)
            return nullptr;
        BackendHost::Lease lease = host->lease();
        if (!lease.backend) {
            *why = tr("The steps of this layer cannot be computed: %1").arg(errorText(lease.error));
            return nullptr;
        }
        lease.backend->setComputeControl({&cancel, nullptr});
        auto trace = lease.backend->compute(tensors->project.problem);
        lease.backend->setComputeControl({}); // a fallback's notice stays, for the project's computation to say
        if (cancel.load(std::memory_order_relaxed))
            return nullptr;
        if (!trace) {
            *why = tr("The steps of this layer cannot be computed: %1").arg(errorText(trace.error()));
            return nullptr;
        }
        tensors->trace = std::move(*trace);
        tensors->ranges = TraceRanges::of(tensors->trace);
        return tensors;
    } catch (const std::bad_alloc &) {
        *why = tr("Memory ran out computing the steps of this layer.");
        return nullptr;
    }
}

void AttentionController::requestThumbnails(const ShownAttention &source, ColorMapKind colorMap, ScaleScope scope,
                                            ColorScaleKind colorScale, bool sinkApart)
{
    const quint64 generation = m_lanes[Thumbs].newest() + 1; // the one start() gives this job
    start(Thumbs,
          [this, poster = m_lanes[Thumbs].poster(), source, colorMap, scope, colorScale, sinkApart,
           generation](const std::atomic<bool> &cancel) -> std::function<void()> {
              // A long file's thumbnails take seconds: the model view says how far they are.
              const auto percent = [this, poster, generation](int p) {
                  poster.post([this, generation, p] {
                      if (generation == m_lanes[Thumbs].newest())
                          emit thumbnailProgress(p);
                  });
              };
              auto thumbs = std::make_shared<AttentionJobs::Thumbnails>(
                  AttentionJobs::thumbnails(source, colorMap, scope, colorScale, cancel, percent, sinkApart));
              if (cancel)
                  return {};
              if (auto changed = changedSource(this, source.set))
                  return changed;
              return [this, thumbs = ThumbnailsPtr(std::move(thumbs))] { emit thumbnailsReady(thumbs); };
          });
}

void AttentionController::requestStatistics(const AttentionSet &set)
{
    start(Stats, [this, set](const std::atomic<bool> &cancel) -> std::function<void()> {
        auto stats = std::make_shared<std::vector<HeadStats>>(AttentionJobs::statistics(set, cancel));
        if (cancel)
            return {};
        if (auto changed = changedSource(this, set))
            return changed;
        return [this, stats = StatisticsPtr(std::move(stats))] { emit statisticsReady(stats); };
    });
}

void AttentionController::requestRollout(const ShownAttention &source)
{
    start(Rollout, [this, source, budget = m_budget](const std::atomic<bool> &cancel) -> std::function<void()> {
        auto r = AttentionJobs::rollout(source, budget, &cancel);
        if (cancel)
            return {};
        if (auto changed = changedSource(this, source.set))
            return changed;
        if (!r) {
            const QString message = errorText(r.error());
            return [this, message] { emit rolloutReady(nullptr, {}, {}, message); };
        }
        auto matrix = std::make_shared<RolloutMatrix>();
        matrix->values = r->cast<float>();
        r = MatrixD(); // the doubles go before the labels are built
        // A plain loop: GCC 12 warns falsely inside Eigen's AVX-512 maxCoeff().
        for (Eigen::Index i = 0; i < matrix->values.size(); ++i)
            matrix->max = std::max(matrix->max, double(matrix->values.data()[i]));
        if (cancel)
            return {};
        const QStringList q = source.queryLabels(), k = source.keyLabels();
        return [this, matrix = RolloutPtr(std::move(matrix)), q, k] { emit rolloutReady(matrix, q, k, QString()); };
    });
}

} // namespace attnscope
