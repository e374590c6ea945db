#include "app/gui/views/RecentFiles.h"

#include <QSettings>

namespace attnscope {

namespace {
const char *const kRecentKey = "files/recent";
constexpr int kMaxRecent = 8;
} // namespace

void addRecentFile(const QString &path)
{
    QSettings settings;
    QStringList recent = settings.value(QLatin1String(kRecentKey)).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kMaxRecent)
        recent.removeLast();
    settings.setValue(QLatin1String(kRecentKey), recent);
}

QStringList recentFiles()
{
    return QSettings().value(QLatin1String(kRecentKey)).toStringList();
}

} // namespace attnscope
