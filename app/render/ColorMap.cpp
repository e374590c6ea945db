#include "app/render/ColorMap.h"

#include <QCoreApplication>

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace colormapdata {
extern const unsigned int kViridis[256];
extern const unsigned int kMagma[256];
extern const unsigned int kCividis[256];
extern const unsigned int kRdBu[256];
} // namespace colormapdata

ColorMap::ColorMap(ColorMapKind kind) : m_kind(kind)
{
    switch (kind) {
    case ColorMapKind::Viridis:
        m_table = colormapdata::kViridis;
        break;
    case ColorMapKind::Magma:
        m_table = colormapdata::kMagma;
        break;
    case ColorMapKind::Cividis:
        m_table = colormapdata::kCividis;
        break;
    case ColorMapKind::Diverging:
        m_table = colormapdata::kRdBu;
        break;
    case ColorMapKind::Grey:
        break;
    }
}

QRgb ColorMap::sample(int index) const
{
    index = std::clamp(index, 0, 255);
    if (!m_table)
        return qRgb(index, index, index);
    return 0xff000000u | m_table[index];
}

QRgb ColorMap::at(double t) const
{
    if (!(t >= 0.0)) // also NaN
        t = 0.0;
    return sample(int(std::lround(std::min(t, 1.0) * 255.0)));
}

QList<ColorMapKind> ColorMap::all()
{
    return {ColorMapKind::Viridis, ColorMapKind::Magma, ColorMapKind::Cividis, ColorMapKind::Grey,
            ColorMapKind::Diverging};
}

QString ColorMap::displayName(ColorMapKind kind)
{
    switch (kind) {
    case ColorMapKind::Viridis:
        return QCoreApplication::translate("attnscope::ColorMap", "Viridis");
    case ColorMapKind::Magma:
        return QCoreApplication::translate("attnscope::ColorMap", "Magma");
    case ColorMapKind::Cividis:
        return QCoreApplication::translate("attnscope::ColorMap", "Cividis");
    case ColorMapKind::Grey:
        return QCoreApplication::translate("attnscope::ColorMap", "Grey");
    case ColorMapKind::Diverging:
        return QCoreApplication::translate("attnscope::ColorMap", "Diverging (blue-red)");
    }
    return {};
}

QString ColorMap::key(ColorMapKind kind)
{
    static const char *const keys[] = {"viridis", "magma", "cividis", "grey", "diverging"};
    return QString::fromLatin1(keys[int(kind)]);
}

std::optional<ColorMapKind> ColorMap::fromKey(const QString &key)
{
    for (ColorMapKind k : all())
        if (ColorMap::key(k) == key)
            return k;
    return std::nullopt;
}

} // namespace attnscope
