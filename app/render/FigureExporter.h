#pragma once

#include "app/render/FigureRenderer.h"
#include "core/analysis/AttentionSet.h"

#include <QImage>
#include <QSize>
#include <QString>

#include <memory>
#include <optional>

namespace attnscope {

enum class FigureFormat { Png, Svg, Pdf };

// How large a figure is made. width/height are pixels at `dpi` (0: from the figure's
// natural size; one given: the other keeps the natural aspect ratio). PNG: exactly that many
// pixels, DPI stored in the file. SVG and PDF: a page of width * 72 / dpi points.
struct FigureSize {
    int width = 0;
    int height = 0;
    int dpi = 150;

    static constexpr int kMinDpi = 10, kMaxDpi = 2400;
    static constexpr int kMaxPixels = 20000; // per side
};

// "png", "svg", "pdf" (case-insensitive) from a suffix or a file name.
std::optional<FigureFormat> figureFormatFromSuffix(const QString &suffixOrPath);
QString figureFormatSuffix(FigureFormat format);

// Paints figures of one computed trace (FigureRenderer) or of an attention set
// (SetFigureRenderer) into files or images. Files are encoded in memory and written by core's
// AtomicFileWriter: either the whole figure or nothing, an old file of that name survives a
// failure, and the failure names the system's reason ("No space left on device").
class FigureExporter
{
    Q_DECLARE_TR_FUNCTIONS(FigureExporter)

public:
    // project and trace must outlive the exporter.
    FigureExporter(const Project &project, const AttentionTrace &trace);
    // An attention set (kept: copies share its maps); name is what titles call it. allowed:
    // cells drawn as masked (a pooled block's cells with no allowed key), or null.
    FigureExporter(AttentionSet set, const QString &name, std::shared_ptr<const MaskMatrix> allowed = nullptr);

    // The figure these options give (a FigureRenderer or a SetFigureRenderer).
    std::unique_ptr<Figure> figure(const FigureOptions &options) const;

    // The page size in points and the PNG size in pixels for these options and size.
    QSizeF pageSize(const FigureOptions &options, const FigureSize &size) const;
    QSize pixelSize(const FigureOptions &options, const FigureSize &size) const;

    // The figure as an image (ARGB32, premultiplied; its DPI in the image's metadata). A null
    // image, with the reason in *error, when the size is out of range.
    QImage image(const FigureOptions &options, const FigureSize &size, QString *error = nullptr) const;
    // Writes the figure; the format is the path's suffix unless given.
    bool write(const QString &path, const FigureOptions &options, const FigureSize &size, QString *error,
               std::optional<FigureFormat> format = std::nullopt) const;

private:
    bool checkSize(const FigureSize &size, const QSize &pixels, QString *error) const;

    const Project *m_project = nullptr;
    const AttentionTrace *m_trace = nullptr;
    std::shared_ptr<const AttentionSet> m_set;
    std::shared_ptr<const MaskMatrix> m_allowed;
    QString m_name;
};

} // namespace attnscope
