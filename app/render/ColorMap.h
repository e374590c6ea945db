#pragma once

#include <QList>
#include <QRgb>
#include <QString>

#include <optional>

namespace attnscope {

enum class ColorMapKind {
    Viridis,   // perceptually uniform, colour-blind safe (matplotlib)
    Magma,     // perceptually uniform, dark to light
    Cividis,   // optimised for colour-vision deficiency
    Grey,      // black to white
    Diverging, // blue - white - red (RdBu reversed), for signed raw scores
};

// A colour map of 256 sRGB samples. at(t) clamps t to [0, 1] and returns sample
// round(t * 255) exactly, so tests can compare pixels against it.
class ColorMap
{
public:
    explicit ColorMap(ColorMapKind kind = ColorMapKind::Viridis);

    ColorMapKind kind() const { return m_kind; }
    QRgb at(double t) const;
    QRgb sample(int index) const; // 0..255

    static QList<ColorMapKind> all();
    static QString displayName(ColorMapKind kind); // translated
    static QString key(ColorMapKind kind);         // stable, for settings and files: "viridis"
    static std::optional<ColorMapKind> fromKey(const QString &key);

private:
    ColorMapKind m_kind;
    const unsigned int *m_table = nullptr; // null for Grey
};

} // namespace attnscope
