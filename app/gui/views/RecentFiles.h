#pragma once

#include <QStringList>

namespace attnscope {

// File > Open Recent: the projects, attention files and model folders opened or saved last,
// newest first, kept in the settings. addRecentFile may be called from any thread.
void addRecentFile(const QString &path);
QStringList recentFiles();

} // namespace attnscope
