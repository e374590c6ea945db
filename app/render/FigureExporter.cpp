#include "app/render/FigureExporter.h"

#include "app/render/DisplayText.h"
#include "app/render/ErrorText.h"
#include "core/io/FileIo.h"

#include <QBuffer>
#include <QFile>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFontInfo>
#include <QHash>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QRawFont>
#include <QRegularExpression>
#include <QSvgGenerator>

#include <cmath>

namespace attnscope {

std::optional<FigureFormat> figureFormatFromSuffix(const QString &suffixOrPath)
{
    QString s = suffixOrPath.toLower();
    if (s.contains(QLatin1Char('.')) || s.contains(QLatin1Char('/')))
        s = QFileInfo(s).suffix();
    if (s == QLatin1String("png"))
        return FigureFormat::Png;
    if (s == QLatin1String("svg"))
        return FigureFormat::Svg;
    if (s == QLatin1String("pdf"))
        return FigureFormat::Pdf;
    return std::nullopt;
}

QString figureFormatSuffix(FigureFormat format)
{
    switch (format) {
    case FigureFormat::Png:
        return QStringLiteral("png");
    case FigureFormat::Svg:
        return QStringLiteral("svg");
    case FigureFormat::Pdf:
        return QStringLiteral("pdf");
    }
    return {};
}

namespace {

// QSvgGenerator writes Qt's family name ("Sans Serif", a fontconfig alias no browser knows)
// as the CSS font-family. Every one becomes a CSS list: the family the text was laid out
// with, quoted, then the generic sans-serif as the fallback.
// The writing systems of CJK text in the figure, each once: their fonts are fallbacks that
// Qt chose through fontconfig and a viewer's sans-serif may lack.
QList<QFontDatabase::WritingSystem> cjkWritingSystems(const QString &text)
{
    QList<QFontDatabase::WritingSystem> out;
    for (const QChar ch : text) {
        if (ch.unicode() < 0x2e80)
            continue;
        QFontDatabase::WritingSystem ws = QFontDatabase::Any;
        switch (ch.script()) {
        case QChar::Script_Han:
            ws = QFontDatabase::SimplifiedChinese;
            break;
        case QChar::Script_Hiragana:
        case QChar::Script_Katakana:
            ws = QFontDatabase::Japanese;
            break;
        case QChar::Script_Hangul:
            ws = QFontDatabase::Korean;
            break;
        default:
            continue;
        }
        if (!out.contains(ws))
            out << ws;
    }
    return out;
}

QByteArray cssFontFamilies(const QByteArray &svg)
{
    static const QRegularExpression attr(QStringLiteral("font-family=\"([^\"]*)\""));
    QHash<QString, QString> lists;
    const QString text = QString::fromUtf8(svg);
    const QList<QFontDatabase::WritingSystem> cjk = cjkWritingSystems(text);
    QString out;
    out.reserve(text.size() + text.size() / 8);
    qsizetype last = 0;
    for (auto it = attr.globalMatch(text); it.hasNext();) {
        const auto m = it.next();
        const QString family = m.captured(1);
        auto found = lists.constFind(family);
        if (found == lists.cend()) {
            QString resolved = QFontInfo(QFont(family)).family();
            resolved.remove(QLatin1Char('\'')).remove(QLatin1Char('"'));
            QStringList names;
            if (!resolved.isEmpty() && resolved.compare(QLatin1String("sans-serif"), Qt::CaseInsensitive) != 0)
                names << resolved;
            for (QFontDatabase::WritingSystem ws : cjk) {
                // QRawFont::fromFont crashes (Qt 6.4) when no font has the writing system.
                if (QFontDatabase::families(ws).isEmpty())
                    continue;
                QString fallback = QRawFont::fromFont(QFont(family), ws).familyName();
                fallback.remove(QLatin1Char('\'')).remove(QLatin1Char('"'));
                if (!fallback.isEmpty() && !names.contains(fallback))
                    names << fallback;
            }
            QString list;
            for (const QString &n : names)
                list += QStringLiteral("'%1', ").arg(n.toHtmlEscaped());
            list += QStringLiteral("sans-serif");
            found = lists.insert(family, list);
        }
        out += QStringView(text).mid(last, m.capturedStart() - last);
        out += QStringLiteral("font-family=\"%1\"").arg(*found);
        last = m.capturedEnd();
    }
    out += QStringView(text).mid(last);
    return out.toUtf8();
}

} // namespace

FigureExporter::FigureExporter(ShownAttention shown, std::shared_ptr<const MaskMatrix> allowed)
    : m_shown(std::move(shown)), m_allowed(std::move(allowed))
{
}

FigureExporter::FigureExporter(AttentionSet set, const QString &name, std::shared_ptr<const MaskMatrix> allowed)
    : m_allowed(std::move(allowed))
{
    m_shown.set = std::move(set);
    m_shown.title = name;
}

FigureExporter::FigureExporter(Project project, AttentionTrace trace)
    : m_shown(ShownAttention::ofProject(std::move(project), std::move(trace)))
{
}

std::unique_ptr<FigureRenderer> FigureExporter::figure(const FigureOptions &options) const
{
    return std::make_unique<FigureRenderer>(m_shown, options, m_allowed);
}

QSizeF FigureExporter::pageSize(const FigureOptions &options, const FigureSize &size) const
{
    const QSizeF natural = figure(options)->naturalSize();
    const double k = 72.0 / std::max(1, size.dpi);
    if (size.width > 0 && size.height > 0)
        return {size.width * k, size.height * k};
    if (size.width > 0)
        return {size.width * k, size.width * k * natural.height() / natural.width()};
    if (size.height > 0)
        return {size.height * k * natural.width() / natural.height(), size.height * k};
    return natural;
}

QSize FigureExporter::pixelSize(const FigureOptions &options, const FigureSize &size) const
{
    if (size.width > 0 && size.height > 0)
        return {size.width, size.height};
    const QSizeF page = pageSize(options, size);
    const double k = std::max(1, size.dpi) / 72.0;
    return {std::max(1, int(std::lround(page.width() * k))), std::max(1, int(std::lround(page.height() * k)))};
}

bool FigureExporter::checkSize(const FigureSize &size, const QSize &pixels, QString *error) const
{
    QString message;
    if (size.dpi < FigureSize::kMinDpi || size.dpi > FigureSize::kMaxDpi)
        message =
            tr("DPI %1 is out of range (%2 to %3)").arg(size.dpi).arg(FigureSize::kMinDpi).arg(FigureSize::kMaxDpi);
    else if (size.width < 0 || size.height < 0 || pixels.width() > FigureSize::kMaxPixels ||
             pixels.height() > FigureSize::kMaxPixels)
        message = tr("figure size %1 x %2 pixels is out of range (1 to %3 per side)")
                      .arg(pixels.width())
                      .arg(pixels.height())
                      .arg(FigureSize::kMaxPixels);
    if (message.isEmpty())
        return true;
    if (error)
        *error = message;
    return false;
}

QImage FigureExporter::image(const FigureOptions &options, const FigureSize &size, QString *error) const
{
    const QSize pixels = pixelSize(options, size);
    if (!checkSize(size, pixels, error))
        return {};
    QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
    if (image.isNull()) {
        if (error)
            *error = tr("not enough memory for a %1 x %2 image").arg(pixels.width()).arg(pixels.height());
        return {};
    }
    image.fill(Qt::transparent);
    const double k = size.dpi / 72.0;
    const QSizeF page(pixels.width() / k, pixels.height() / k);
    const std::unique_ptr<FigureRenderer> renderer = figure(options);
    {
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setRenderHint(QPainter::TextAntialiasing);
        painter.scale(k, k);
        renderer->paint(painter, QRectF(QPointF(0, 0), page));
    }
    const int dotsPerMeter = int(std::lround(size.dpi / 0.0254));
    image.setDotsPerMeterX(dotsPerMeter);
    image.setDotsPerMeterY(dotsPerMeter);
    image.setText(QStringLiteral("Title"), renderer->title());
    image.setText(QStringLiteral("Description"), renderer->description());
    image.setText(QStringLiteral("Software"), QStringLiteral("AttnScope"));
    return image;
}

bool FigureExporter::write(const QString &path, const FigureOptions &options, const FigureSize &size, QString *error,
                           std::optional<FigureFormat> format) const
{
    auto fail = [&](const QString &message) {
        if (error)
            *error = message;
        return false;
    };
    if (!format)
        format = figureFormatFromSuffix(path);
    if (!format)
        return fail(tr("%1: expected a .png, .svg or .pdf file name").arg(path));
    if (const QString problem = figure(options)->problem(); !problem.isEmpty())
        return fail(tr("%1: %2").arg(path, problem));

    QString sizeError;
    QImage png;
    if (*format == FigureFormat::Png) {
        png = image(options, size, &sizeError);
        if (png.isNull())
            return fail(sizeError);
    } else if (!checkSize(size, pixelSize(options, size), &sizeError)) {
        return fail(sizeError);
    }

    // Encoded in memory, then written as every other output is (core's AtomicFileWriter):
    // whole or not at all, and a failure says the system's reason ("No space left on
    // device"), not the encoder's.
    QBuffer encoded;
    encoded.open(QIODevice::WriteOnly);
    if (*format == FigureFormat::Png) {
        if (!png.save(&encoded, "PNG"))
            return fail(tr("%1: the PNG could not be encoded").arg(path));
    } else {
        // Vector output in points; embedded images of tiny cells at the requested DPI.
        FigureOptions o = options;
        o.pixelScale = size.dpi / 72.0;
        const std::unique_ptr<FigureRenderer> renderer = figure(o);
        const QSizeF page = pageSize(options, size);
        const QSize points(int(std::ceil(page.width() - 1e-6)), int(std::ceil(page.height() - 1e-6)));
        const QRectF target(QPointF(0, 0), QSizeF(points));
        bool painted = false;
        if (*format == FigureFormat::Svg) {
            // The text is fixed up (font families, characters XML forbids) once painted.
            QBuffer buffer;
            buffer.open(QIODevice::WriteOnly);
            QSvgGenerator svg;
            svg.setOutputDevice(&buffer);
            svg.setResolution(72); // one unit per point: fonts sized in points come out right
            svg.setSize(points);
            svg.setViewBox(target);
            // Qt 6.4 writes these into <title> and <desc> as they are: a token such as
            // "<pad>" in a title would break the XML (the test reads the title back).
            svg.setTitle(renderer->title().toHtmlEscaped());
            svg.setDescription(renderer->description().toHtmlEscaped());
            QPainter painter;
            if ((painted = painter.begin(&svg))) {
                painter.setRenderHint(QPainter::Antialiasing);
                renderer->paint(painter, target);
                painted = painter.end();
            }
            encoded.write(xmlSafe(cssFontFamilies(buffer.data())));
        } else {
            QPdfWriter pdf(&encoded);
            pdf.setResolution(72);
            pdf.setCreator(QStringLiteral("AttnScope"));
            pdf.setTitle(renderer->title());
            pdf.setPageSize(QPageSize(QSizeF(points), QPageSize::Point, QString(), QPageSize::ExactMatch));
            pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
            QPainter painter;
            if ((painted = painter.begin(&pdf))) {
                painter.setRenderHint(QPainter::Antialiasing);
                renderer->paint(painter, target);
                painted = painter.end();
            }
        }
        if (!painted)
            return fail(tr("%1: the figure could not be painted").arg(path));
    }
    // A figure of a mapped attention file rewritten meanwhile drew zeros or another file's
    // values: nothing is written then.
    if (Status s = m_shown.set.checkSource(); !s)
        return fail(errorText(s.error()));
    AtomicFileWriter file(QFile::encodeName(path).toStdString());
    Status written = file.open();
    if (written) {
        file.write(encoded.data().constData(), std::size_t(encoded.data().size()));
        written = file.commit();
    }
    if (!written)
        return fail(errorText(written.error()));
    return true;
}

} // namespace attnscope
