#include "app/render/ColorScale.h"

#include "app/render/HeatmapRenderer.h"

#include <QCoreApplication>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope {

namespace {

// The log scale reaches at most this far below its maximum: four decades show a causal head's
// long tail without letting float noise (1e-30) stretch the bar.
constexpr double kLogDepth = 1e-4;
// A percentile scale ranks at most this many values (every n-th beyond): a 12 x 12 x 512 x 512
// model grid would otherwise sort 37 million values for ranks no eye can tell apart.
constexpr std::size_t kMaxRanked = std::size_t(1) << 22;

// "10⁻³": a power of ten with the exponent in superscript digits.
QString powerOfTen(int exponent)
{
    static const char16_t digits[] = u"\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079";
    QString out = QStringLiteral("10");
    if (exponent < 0)
        out += QChar(0x207b);
    for (QChar c : QString::number(std::abs(exponent)))
        out += QChar(digits[c.digitValue()]);
    return out;
}

template <typename F>
void forEachValue(const std::vector<const HeatmapData *> &maps, F &&f)
{
    for (const HeatmapData *d : maps) {
        if (!d || !d->values)
            continue;
        const MatrixF &v = *d->values;
        for (Eigen::Index r = 0; r < v.rows(); ++r)
            for (Eigen::Index c = 0; c < v.cols(); ++c)
                if (!d->showsAsMasked(r, c) && std::isfinite(v(r, c)))
                    f(v(r, c));
    }
}

} // namespace

ColorScale ColorScale::build(ColorScaleKind kind, const std::vector<const HeatmapData *> &maps)
{
    ColorScale s;
    const HeatmapData *first = maps.empty() ? nullptr : maps.front();
    s.m_lo = first ? first->rangeMin : 0.0;
    s.m_hi = first ? first->rangeMax : 1.0;
    const bool isSigned = first && first->signedValues;
    s.m_kind = effectiveKind(kind, isSigned, first && first->difference);
    if (s.m_kind == ColorScaleKind::Log) {
        double smallest = std::numeric_limits<double>::infinity();
        forEachValue(maps, [&](float v) {
            if (v > 0)
                smallest = std::min(smallest, double(v));
        });
        s.m_hi = s.m_hi > 0 ? s.m_hi : 1.0;
        s.m_lo = std::max(std::isfinite(smallest) ? smallest : 0.0, s.m_hi * kLogDepth);
        s.m_lo = std::min(s.m_lo, s.m_hi);
    } else if (s.m_kind == ColorScaleKind::Percentile) {
        std::size_t count = 0;
        forEachValue(maps, [&](float) { ++count; });
        const std::size_t stride = std::max<std::size_t>(1, (count + kMaxRanked - 1) / kMaxRanked);
        auto sorted = std::make_shared<std::vector<float>>();
        sorted->reserve(count / stride + 1);
        std::size_t i = 0;
        forEachValue(maps, [&](float v) {
            if (i++ % stride == 0)
                sorted->push_back(v);
        });
        std::sort(sorted->begin(), sorted->end());
        s.m_sorted = std::move(sorted);
    }
    return s;
}

double ColorScale::position(double value) const
{
    switch (m_kind) {
    case ColorScaleKind::Linear: {
        const double span = m_hi - m_lo;
        return std::clamp(span > 0.0 ? (value - m_lo) / span : 0.0, 0.0, 1.0);
    }
    case ColorScaleKind::Log:
        if (!(value > m_lo))
            return 0.0;
        if (value >= m_hi)
            return 1.0;
        return (std::log10(value) - std::log10(m_lo)) / (std::log10(m_hi) - std::log10(m_lo));
    case ColorScaleKind::Percentile: {
        const std::vector<float> &v = *m_sorted;
        if (v.size() < 2)
            return 0.5;
        const auto below = std::lower_bound(v.begin(), v.end(), float(value)) - v.begin();
        return std::clamp(double(below) / double(v.size() - 1), 0.0, 1.0);
    }
    }
    return 0.0;
}

std::vector<ColorScaleTick> ColorScale::ticks() const
{
    std::vector<ColorScaleTick> out;
    switch (m_kind) {
    case ColorScaleKind::Linear:
        for (double v : {m_hi, (m_lo + m_hi) / 2, m_lo})
            // Near float32's limit fixed notation is 39 digits: exponent form there.
            out.push_back(
                {position(v), v, std::abs(v) >= 1e6 ? QString::number(v, 'g', 3) : QString::number(v, 'f', 2)});
        break;
    case ColorScaleKind::Log: {
        const int top = int(std::floor(std::log10(m_hi) + 1e-9)), bottom = int(std::ceil(std::log10(m_lo) - 1e-9));
        for (int e = top; e >= bottom; --e)
            out.push_back({position(std::pow(10.0, e)), std::pow(10.0, e), powerOfTen(e)});
        if (out.size() < 2) { // less than a decade: its ends, as numbers
            out.clear();
            out.push_back({1.0, m_hi, formatValue(m_hi)});
            if (m_lo < m_hi)
                out.push_back({0.0, m_lo, formatValue(m_lo)});
        }
        break;
    }
    case ColorScaleKind::Percentile: {
        const std::vector<float> &v = *m_sorted;
        if (v.empty())
            break;
        for (double q : {1.0, 0.75, 0.5, 0.25, 0.0}) {
            const double value = v[std::size_t(std::lround(q * double(v.size() - 1)))];
            out.push_back({q, value, formatValue(value)});
        }
        break;
    }
    }
    return out;
}

QList<ColorScaleKind> ColorScale::all()
{
    return {ColorScaleKind::Linear, ColorScaleKind::Log, ColorScaleKind::Percentile};
}

QString ColorScale::key(ColorScaleKind kind)
{
    static const char *const keys[] = {"linear", "log", "percentile"};
    return QString::fromLatin1(keys[int(kind)]);
}

QString ColorScale::displayName(ColorScaleKind kind)
{
    switch (kind) {
    case ColorScaleKind::Linear:
        return QCoreApplication::translate("attnscope::ColorScale", "Linear");
    case ColorScaleKind::Log:
        return QCoreApplication::translate("attnscope::ColorScale", "Logarithmic");
    case ColorScaleKind::Percentile:
        return QCoreApplication::translate("attnscope::ColorScale", "Percentile (equal areas)");
    }
    return {};
}

std::optional<ColorScaleKind> ColorScale::fromKey(const QString &key)
{
    for (ColorScaleKind k : all())
        if (ColorScale::key(k) == key)
            return k;
    return std::nullopt;
}

QString ColorScale::formatValue(double v)
{
    if (v == 0.0)
        return QStringLiteral("0");
    if (std::abs(v) >= 0.01 && std::abs(v) < 1000)
        return QString::number(v, 'f', 2);
    return QString::number(v, 'g', 2);
}

} // namespace attnscope
