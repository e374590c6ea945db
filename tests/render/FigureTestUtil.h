#pragma once

// Reading exported figures back: SVG through QXmlStreamReader, PDF rasterised by pdftoppm,
// and a pixel comparison of two images.

#include <QColor>
#include <QFile>
#include <QImage>
#include <QPainter>
#include <QProcess>
#include <QStandardPaths>
#include <QStringList>
#include <QXmlStreamReader>

#include <cmath>
#include <vector>

namespace attnscope::test {

struct SvgRect {
    QRectF rect;
    QString fill; // of the rect or the nearest <g> around it that sets one
};

struct SvgContent {
    bool valid = false;
    QString error;
    std::vector<SvgRect> rects;
    QStringList texts;
    int images = 0;
    QString title;
};

inline SvgContent readSvg(const QString &path)
{
    SvgContent out;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        out.error = f.errorString();
        return out;
    }
    QXmlStreamReader xml(&f);
    std::vector<QString> fills; // one per open element
    bool inTitle = false;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement()) {
            const auto a = xml.attributes();
            QString fill =
                a.hasAttribute("fill") ? a.value("fill").toString() : (fills.empty() ? QString() : fills.back());
            fills.push_back(fill);
            const auto name = xml.name();
            if (name == QLatin1String("rect"))
                out.rects.push_back({QRectF(a.value("x").toDouble(), a.value("y").toDouble(),
                                            a.value("width").toDouble(), a.value("height").toDouble()),
                                     fill});
            else if (name == QLatin1String("text")) {
                // Reads up to and including </text>: its end element is consumed here.
                out.texts << xml.readElementText(QXmlStreamReader::IncludeChildElements);
                fills.pop_back();
            } else if (name == QLatin1String("image"))
                ++out.images;
            else if (name == QLatin1String("title"))
                inTitle = true;
        } else if (xml.isEndElement()) {
            if (!fills.empty())
                fills.pop_back();
            inTitle = false;
        } else if (xml.isCharacters() && inTitle) {
            out.title += xml.text().toString();
        }
    }
    out.valid = !xml.hasError();
    if (xml.hasError())
        out.error = xml.errorString();
    return out;
}

inline QString pdftoppm()
{
    return QStandardPaths::findExecutable(QStringLiteral("pdftoppm"));
}

// The first page of a PDF as an image at dpi, or a null image.
inline QImage rasterisePdf(const QString &pdf, int dpi, const QString &outStem)
{
    QProcess p;
    p.start(pdftoppm(), {QStringLiteral("-png"), QStringLiteral("-r"), QString::number(dpi),
                         QStringLiteral("-singlefile"), pdf, outStem});
    if (!p.waitForFinished(120000) || p.exitCode() != 0)
        return {};
    return QImage(outStem + QStringLiteral(".png"));
}

// Mean absolute difference per channel (0..255) over the pixels both images have, both
// composited on white; -1 when their sizes differ by more than a pixel.
inline double meanPixelDifference(const QImage &a, const QImage &b)
{
    if (std::abs(a.width() - b.width()) > 1 || std::abs(a.height() - b.height()) > 1)
        return -1;
    auto onWhite = [](const QImage &image) {
        QImage out(image.size(), QImage::Format_RGB32);
        out.fill(Qt::white);
        QPainter(&out).drawImage(0, 0, image);
        return out;
    };
    const QImage x = onWhite(a), y = onWhite(b);
    const int w = std::min(x.width(), y.width()), h = std::min(x.height(), y.height());
    double sum = 0;
    for (int r = 0; r < h; ++r) {
        const auto *p = reinterpret_cast<const QRgb *>(x.constScanLine(r));
        const auto *q = reinterpret_cast<const QRgb *>(y.constScanLine(r));
        for (int c = 0; c < w; ++c)
            sum += std::abs(qRed(p[c]) - qRed(q[c])) + std::abs(qGreen(p[c]) - qGreen(q[c])) +
                   std::abs(qBlue(p[c]) - qBlue(q[c]));
    }
    return sum / (3.0 * w * h);
}

} // namespace attnscope::test
