#include "core/analysis/Pooling.h"

#include "core/analysis/AttentionSet.h"
#include "core/attention/AttentionBackend.h"
#include "core/attention/QkAttention.h"

#include <new>
#include <string>

namespace attnscope {

namespace {

// A set from queries and keys: the block pooled by the engine from q and k (computePooledQk), one
// product per tile, instead of row by row.
Result<PooledSetBlock> poolQkBlock(const AttentionSet &set, int layer, const SetBlock &block,
                                   const SetPoolOptions &options)
{
    auto qk = set.qkSource()->layer(layer);
    if (!qk)
        return qk.error();
    PoolOptions pool;
    pool.bins = options.bins;
    pool.mode = options.mode;
    pool.queryBegin = block.q0;
    pool.queryEnd = block.q1;
    pool.keyBegin = block.k0;
    pool.keyEnd = block.k1;
    pool.cancel = options.cancel;
    pool.progress = options.progress;
    pool.headMean = options.headMean;
    const bool oneHead = options.head >= 0 && !options.headMean;
    const QkLayer single = oneHead ? singleHeadLayer(**qk, options.head) : QkLayer{};
    const QkLayer &source = oneHead ? single : **qk;
    auto pooled = options.backend ? options.backend->computePooledQk(source, pool) : computePooledQk(source, pool);
    if (!pooled)
        return pooled.error();
    if (options.rowRead) // the rows of every head pooled, told as a row reader tells them
        for (std::int64_t i = 0, n = block.rows() * source.heads; i < n; ++i)
            options.rowRead();
    PooledSetBlock out;
    if (options.head >= 0 && !oneHead)
        out.heads.push_back(std::move(pooled->pooled[size_t(options.head)]));
    else
        out.heads = std::move(pooled->pooled);
    out.headMean = std::move(pooled->headMean);
    if (Status s = set.checkSource(); !s)
        return s.error();
    return out;
}

} // namespace

Result<PooledSetBlock> poolSetBlock(const AttentionSet &set, int sample, int layer, const SetBlock &block,
                                    const SetPoolOptions &options)
{
    if (sample < 0 || sample >= set.samples() || layer < 0 || layer >= set.layers() || options.head >= set.heads())
        return Error{"pool: sample " + std::to_string(sample) + ", layer " + std::to_string(layer) + ", head " +
                         std::to_string(options.head) + " is outside the set's " + std::to_string(set.samples()) +
                         " x " + std::to_string(set.layers()) + " x " + std::to_string(set.heads()),
                     ErrorKind::InvalidInput};
    if (block.q0 < 0 || block.k0 < 0 || block.q1 > set.queries() || block.k1 > set.keys() || block.rows() < 1 ||
        block.keys() < 1 || options.bins < 1)
        return Error{"block: queries " + std::to_string(block.q0) + ".." + std::to_string(block.q1) + " x keys " +
                         std::to_string(block.k0) + ".." + std::to_string(block.k1) + " is outside the " +
                         std::to_string(set.queries()) + " x " + std::to_string(set.keys()) + " maps",
                     ErrorKind::InvalidInput};
    if (set.isFromQk())
        return poolQkBlock(set, layer, block, options);
    try {
        // The head mean needs every head's row at once; without it one head is read at a time.
        const int first = options.head >= 0 ? options.head : 0;
        const int last = options.head >= 0 ? options.head + 1 : set.heads();
        const bool mean = options.headMean;
        std::vector<RowPooler<float>> poolers;
        for (int h = first; h < last; ++h)
            poolers.emplace_back(block.rows(), block.keys(), options.bins, options.mode);
        std::vector<RowPooler<float>> meanPooler;
        if (mean)
            meanPooler.emplace_back(block.rows(), block.keys(), options.bins, options.mode);
        const std::int64_t readHeads = mean ? set.heads() : last - first;
        if (options.progress) {
            options.progress->total = readHeads * block.rows();
            options.progress->done = 0;
        }
        std::vector<float> row(static_cast<std::size_t>(block.keys()));
        std::vector<float> sum(mean ? row.size() : 0);
        auto cancelled = [&] { return options.cancel && options.cancel->load(std::memory_order_relaxed); };
        if (mean) {
            const float scale = 1.0f / float(set.heads());
            for (std::int64_t i = block.q0; i < block.q1; ++i) {
                if (cancelled())
                    return Error{"cancelled", ErrorKind::Cancelled};
                std::fill(sum.begin(), sum.end(), 0.0f);
                for (int h = 0; h < set.heads(); ++h) {
                    set.rowSegment(sample, layer, h, i, block.k0, block.k1, row.data());
                    if (h >= first && h < last)
                        poolers[std::size_t(h - first)].add(i - block.q0, row.data());
                    if (options.rowRead)
                        options.rowRead();
                    for (std::size_t j = 0; j < row.size(); ++j)
                        sum[j] += row[j];
                }
                for (float &v : sum)
                    v *= scale;
                meanPooler.front().add(i - block.q0, sum.data());
                if (options.progress)
                    options.progress->done.fetch_add(set.heads(), std::memory_order_relaxed);
            }
        } else {
            for (int h = first; h < last; ++h)
                for (std::int64_t i = block.q0; i < block.q1; ++i) {
                    if (cancelled())
                        return Error{"cancelled", ErrorKind::Cancelled};
                    set.rowSegment(sample, layer, h, i, block.k0, block.k1, row.data());
                    poolers[std::size_t(h - first)].add(i - block.q0, row.data());
                    if (options.progress)
                        options.progress->done.fetch_add(1, std::memory_order_relaxed);
                    if (options.rowRead)
                        options.rowRead();
                }
        }
        // Rows read from a file rewritten meanwhile are zeros or another file's: say so instead.
        if (Status s = set.checkSource(); !s)
            return s.error();
        PooledSetBlock out;
        for (const RowPooler<float> &p : poolers)
            out.heads.push_back(p.cells());
        if (mean)
            out.headMean = meanPooler.front().cells();
        return out;
    } catch (const std::bad_alloc &) {
        return Error{"out of memory while pooling the attention", ErrorKind::OutOfMemory};
    }
}

} // namespace attnscope
