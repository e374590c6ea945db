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

// Paints figures (FigureRenderer) of what the views show into files or images. Files are
// encoded in memory and written by core's AtomicFileWriter: either the whole figure or nothing,
// an old file of that name survives a failure, and the failure names the system's reason ("No
// space left on device").
class FigureExporter
{
    Q_DECLARE_TR_FUNCTIONS(FigureExporter)

public:
    // allowed: cells drawn as masked where shown has no tensors (a pooled block's cells with
    // no allowed key), or null.
    explicit FigureExporter(ShownAttention shown, std::shared_ptr<const MaskMatrix> allowed = nullptr);
    // A set alone, titled `name` (an attention file).
    FigureExporter(AttentionSet set, const QString &name, std::shared_ptr<const MaskMatrix> allowed = nullptr);
    // A project and its trace (the command line's, tests').
    FigureExporter(Project project, AttentionTrace trace);

    std::unique_ptr<FigureRenderer> figure(const FigureOptions &options) const;

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

    ShownAttention m_shown;
    std::shared_ptr<const MaskMatrix> m_allowed;
};

} // namespace attnscope
