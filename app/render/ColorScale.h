#pragma once

#include <QList>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

namespace attnscope {

struct HeatmapData;

// How a value becomes a position on the colour map. Long causal heads put almost all weight
// on a few keys: a linear scale shows them and paints everything else the lowest colour.
enum class ColorScaleKind {
    Linear,     // (v - min) / (max - min) over the map's range
    Log,        // log10 over [max(smallest positive value, max * 1e-4), max]
    Percentile, // the value's rank among the map's allowed values: equal-area colour bands
};

// A value and where it sits on the colour bar (0: bottom, 1: top), with its label.
struct ColorScaleTick {
    double position = 0.0;
    double value = 0.0;
    QString label;
};

// The mapping from values to colour-map positions for one map, or for several that share one
// colour bar (a grid of heads). Built once per map and kept (a percentile scale sorts the
// map's values), then asked per cell.
class ColorScale
{
public:
    // Over the allowed, finite cells of `maps` (cells painted as masked are not values). Every
    // map shares the first one's range (rangeMin, rangeMax). Signed maps (scores) have no log
    // scale: Log gives Linear for them.
    static ColorScale build(ColorScaleKind kind, const std::vector<const HeatmapData *> &maps);
    // The kind a map gets when `kind` is asked: Linear for Log on signed values, and always
    // Linear for a difference (HeatmapData::difference: symmetric around 0, so 0 stays white).
    static ColorScaleKind effectiveKind(ColorScaleKind kind, bool signedValues, bool difference = false)
    {
        return difference || (kind == ColorScaleKind::Log && signedValues) ? ColorScaleKind::Linear : kind;
    }

    ColorScaleKind kind() const { return m_kind; }
    // Where a finite value sits, in [0, 1]. Log: values at or below the floor (zero included)
    // sit at 0. Percentile: the fraction of the values that are smaller than it, so ties share
    // the lowest rank of their run and the smallest value sits at 0, the largest at 1.
    double position(double value) const;
    // The bar's ticks, top first. Linear: max, middle, min; Log: the powers of ten in the
    // range (with its ends where fewer than two are); Percentile: the values at 100, 75, 50,
    // 25 and 0 %.
    std::vector<ColorScaleTick> ticks() const;
    // The log scale's range (for tests and the legend).
    double logFloor() const { return m_lo; }
    double logCeiling() const { return m_hi; }

    static QList<ColorScaleKind> all();
    static QString key(ColorScaleKind kind);         // stable, for settings and files: "linear", "log", "percentile"
    static QString displayName(ColorScaleKind kind); // translated
    static std::optional<ColorScaleKind> fromKey(const QString &key);
    // A tick label: "0", "0.25", "1.2e-05".
    static QString formatValue(double v);

private:
    ColorScaleKind m_kind = ColorScaleKind::Linear;
    double m_lo = 0.0, m_hi = 1.0;                      // Linear: the range; Log: floor and ceiling
    std::shared_ptr<const std::vector<float>> m_sorted; // Percentile: the values, ascending
};

} // namespace attnscope
