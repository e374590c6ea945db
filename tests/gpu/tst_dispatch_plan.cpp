// The dispatch planner on its own (no device needed): every element of every operand is
// covered exactly once, every binding respects the range and alignment limits, and
// what cannot be bound is refused with a message.

#include "gpu/DispatchPlan.h"

#include <QObject>
#include <QTest>

#include <set>

using namespace attnscope::vk;

class TestDispatchPlan : public QObject
{
    Q_OBJECT

private slots:
    void fitsWithoutSplitting();
    void splitsAndCoversEverything_data();
    void splitsAndCoversEverything();
    void refusesARowTooLong();
    void groupedHeadsReadTheirKeyValueHead_data();
    void groupedHeadsReadTheirKeyValueHead();
};

namespace {

// A GEMM-like plan: dims k, h, m, n; A = [h][m][k], B = [h][k][n], C = [h][m][n], all dense.
struct Gemm {
    std::uint64_t k, h, m, n;
    std::vector<PlanDim> dims(std::uint32_t maxGroups) const
    {
        return {{k, 0, 0}, {h, 1, maxGroups}, {m, 8, maxGroups}, {n, 8, maxGroups}};
    }
    std::vector<PlanOperand> operands() const
    {
        return {
            {"A", 3, {1, m * k, k, 0}, 1, (3 + h * m * k) * 4},
            {"B", 0, {n, k * n, 0, 1}, 1, h * k * n * 4},
            {"C", 5, {0, m * n, n, 1}, 1, (5 + h * m * n) * 4},
        };
    }
};

} // namespace

void TestDispatchPlan::fitsWithoutSplitting()
{
    const Gemm g{16, 2, 10, 12};
    auto plan = planChunks("gemm", g.dims(65535), g.operands(), {1 << 20, 16});
    QVERIFY(plan.ok());
    QCOMPARE(plan->size(), size_t(1));
    const PlanChunk &c = plan->front();
    QCOMPARE(c.count[0], std::uint64_t(16));
    QCOMPARE(c.bindings[0].offsetBytes, std::uint64_t(0));
    QCOMPARE(c.bindings[0].localOffset, std::uint64_t(3)); // the operand's own offset survives
}

void TestDispatchPlan::splitsAndCoversEverything_data()
{
    QTest::addColumn<qulonglong>("maxRange");
    QTest::addColumn<qulonglong>("alignment");
    QTest::addColumn<uint>("maxGroups");
    QTest::addColumn<qulonglong>("bBytes"); // B's element: a float, or a stored 16-bit weight value
    for (qulonglong bBytes : {4ull, 2ull}) {
        const std::string b = bBytes == 2 ? ", 16-bit B" : "";
        QTest::newRow(("range 256, align 16" + b).c_str()) << qulonglong(256) << qulonglong(16) << 65535u << bBytes;
        QTest::newRow(("range 1000, align 64" + b).c_str()) << qulonglong(1000) << qulonglong(64) << 65535u << bBytes;
        QTest::newRow(("one group per axis" + b).c_str()) << qulonglong(1 << 20) << qulonglong(4) << 1u << bBytes;
        QTest::newRow(("range 768, 2 groups, align 256" + b).c_str())
            << qulonglong(768) << qulonglong(256) << 2u << bBytes;
    }
}

void TestDispatchPlan::splitsAndCoversEverything()
{
    QFETCH(qulonglong, maxRange);
    QFETCH(qulonglong, alignment);
    QFETCH(uint, maxGroups);
    QFETCH(qulonglong, bBytes);
    const Gemm g{37, 3, 29, 21};
    auto ops = g.operands();
    ops[1].elementBytes = bBytes;
    ops[1].bufferBytes = (g.h * g.k * g.n * bBytes + 3) / 4 * 4; // whole words, as buffers are made
    auto plan = planChunks("gemm", g.dims(maxGroups), ops, {maxRange, alignment});
    QVERIFY2(plan.ok(), plan.ok() ? "" : plan.message().c_str());
    QVERIFY(plan->size() > 1);
    // Every (k, h, m, n) point exactly once, and every access inside its binding.
    std::set<std::array<std::uint64_t, 4>> seen;
    for (const PlanChunk &c : *plan) {
        QVERIFY(c.count[2] <= std::uint64_t(maxGroups) * 8 && c.count[3] <= std::uint64_t(maxGroups) * 8);
        QVERIFY(c.count[1] <= maxGroups);
        for (size_t o = 0; o < ops.size(); ++o) {
            const PlanBinding &b = c.bindings[o];
            QCOMPARE(b.offsetBytes % alignment, std::uint64_t(0));
            QVERIFY(b.rangeBytes <= maxRange);
            QCOMPARE(b.rangeBytes % 4, std::uint64_t(0)); // shaders read whole words
            QVERIFY(b.offsetBytes + b.rangeBytes <= ops[o].bufferBytes);
        }
        for (std::uint64_t k = 0; k < c.count[0]; ++k)
            for (std::uint64_t h = 0; h < c.count[1]; ++h)
                for (std::uint64_t m = 0; m < c.count[2]; ++m)
                    for (std::uint64_t n = 0; n < c.count[3]; ++n) {
                        const std::array<std::uint64_t, 4> local = {k, h, m, n};
                        std::array<std::uint64_t, 4> global{};
                        for (int d = 0; d < 4; ++d)
                            global[size_t(d)] = c.start[size_t(d)] + local[size_t(d)];
                        QVERIFY(seen.insert(global).second);
                        for (size_t o = 0; o < ops.size(); ++o) {
                            // The element the shader computes from the local offset and strides...
                            std::uint64_t local0 = c.bindings[o].localOffset, global0 = ops[o].offset;
                            for (int d = 0; d < 4; ++d) {
                                local0 += local[size_t(d)] * ops[o].stride[size_t(d)];
                                global0 += global[size_t(d)] * ops[o].stride[size_t(d)];
                            }
                            // ... is the right one, and inside the bound range.
                            const std::uint64_t e = ops[o].elementBytes;
                            QCOMPARE(c.bindings[o].offsetBytes / e + local0, global0);
                            QVERIFY((local0 + 1) * e <= c.bindings[o].rangeBytes);
                        }
                    }
    }
    QCOMPARE(seen.size(), size_t(g.k * g.h * g.m * g.n));
    // Chunks along the depth come in order, so accumulation steps can be separated by barriers.
    for (size_t i = 1; i < plan->size(); ++i)
        QVERIFY((*plan)[i].start[0] >= (*plan)[i - 1].start[0]);
}

void TestDispatchPlan::refusesARowTooLong()
{
    // A softmax row of 1000 floats cannot live in a 1 KiB binding.
    const std::vector<PlanDim> dims = {{2, 1, 65535}, {4, 1, 65535}};
    const std::vector<PlanOperand> ops = {{"softmax (scores)", 0, {4000, 1000}, 1000, 32000}};
    auto plan = planChunks("softmax", dims, ops, {1024, 16});
    QVERIFY(!plan.ok());
    QCOMPARE(QString::fromStdString(plan.message()),
             QStringLiteral("softmax: softmax (scores): needs 4000 bytes in one binding, more than the device's "
                            "maxStorageBufferRange of 1024 bytes"));
    QCOMPARE(plan.error().code, std::string("vulkan.tooLarge.binding")); // translated in the application
}

void TestDispatchPlan::groupedHeadsReadTheirKeyValueHead_data()
{
    QTest::addColumn<qulonglong>("maxRange");
    QTest::addColumn<uint>("maxGroups");
    QTest::newRow("no limit") << qulonglong(1 << 20) << 65535u;
    QTest::newRow("one head per chunk") << qulonglong(1 << 20) << 1u;
    QTest::newRow("two heads per chunk (mid-group starts)") << qulonglong(1 << 20) << 2u;
    QTest::newRow("three groups allowed: chunks of one group") << qulonglong(1 << 20) << 3u;
    QTest::newRow("six groups allowed: chunks of whole groups") << qulonglong(1 << 20) << 6u;
    QTest::newRow("range 256") << qulonglong(256) << 65535u;
}

// Grouped-query scores: 12 query heads in groups of 4 read 3 key/value heads (B's head index is
// h / 4). A chunk holds whole groups or lies inside one, so the shader's local h / 4 is the key/value
// head relative to the chunk's binding of B.
void TestDispatchPlan::groupedHeadsReadTheirKeyValueHead()
{
    QFETCH(qulonglong, maxRange);
    QFETCH(uint, maxGroups);
    const std::uint64_t k = 5, h = 12, group = 4, m = 9, n = 7;
    std::vector<PlanDim> dims = {{k, 0, 0}, {h, 1, maxGroups, group}, {m, 8, 65535}, {n, 8, 65535}};
    std::vector<PlanOperand> ops = {
        {"A", 0, {1, m * k, k, 0}, 1, h * m * k * 4},
        {"B", 0, {n, k * n, 0, 1}, 1, (h / group) * k * n * 4, {false, true, false, false}},
        {"C", 0, {0, m * n, n, 1}, 1, h * m * n * 4},
    };
    auto plan = planChunks("scores", dims, ops, {maxRange, 16});
    QVERIFY2(plan.ok(), plan.ok() ? "" : plan.message().c_str());
    std::uint64_t heads = 0;
    for (const PlanChunk &c : *plan) {
        const std::uint64_t h0 = c.start[1], count = c.count[1];
        QVERIFY(count <= maxGroups);
        QVERIFY2(h0 % group == 0 ? count % group == 0 || count < group : h0 / group == (h0 + count - 1) / group,
                 "a chunk straddles a group");
        if (c.start[0] == 0 && c.start[2] == 0 && c.start[3] == 0)
            heads += count;
        const PlanBinding &b = c.bindings[1];
        QVERIFY(b.rangeBytes <= maxRange);
        for (std::uint64_t hl = 0; hl < count; ++hl)
            for (std::uint64_t kk = 0; kk < c.count[0]; ++kk)
                for (std::uint64_t nn = 0; nn < c.count[3]; ++nn) {
                    const std::uint64_t local = b.localOffset + kk * n + (hl / group) * k * n + nn;
                    const std::uint64_t global = (c.start[0] + kk) * n + ((h0 + hl) / group) * k * n + c.start[3] + nn;
                    QCOMPARE(b.offsetBytes / 4 + local, global);
                    QVERIFY((local + 1) * 4 <= b.rangeBytes);
                }
    }
    QCOMPARE(heads, h);
}

QTEST_GUILESS_MAIN(TestDispatchPlan)
#include "tst_dispatch_plan.moc"
