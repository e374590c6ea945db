#pragma once

#include <QKeySequence>
#include <QList>

class QDockWidget;
class QMainWindow;

namespace attnscope {

// Keeps spin boxes and combo boxes, everywhere in the application, from taking input meant
// for something else (installed once, on the application, so fields made later are covered):
// - the mouse wheel changes only the field that has the keyboard focus; over any other it goes
//   on to what is around it, so scrolling the editor panel never edits the project on the way;
// - the undo and redo shortcuts reach the window's Undo and Redo (the document's history) while
//   a spin box has the focus: its line edit would take them for its own text, so Ctrl+Z right
//   after typing a head count would do nothing.
void installFieldGuard();

// The platform's keys for `standard`, with `extra` added where the platform lacks it (Save As
// has Ctrl+Shift+S, Redo has Ctrl+Shift+Z and Ctrl+Y, on every platform).
QList<QKeySequence> keysWith(QKeySequence::StandardKey standard, const QList<QKeySequence> &extra);

// Without a saved geometry (the first run): a size that shows every dock whole on the window's
// screen, centred on it; and once the window is shown and laid out, `dock` (a scroll area) as
// tall as its contents want, the height taken from `neighbour` (the dock above or below it) down
// to that one's minimum. Call before show().
void placeForFirstRun(QMainWindow *window, QDockWidget *dock, QDockWidget *neighbour);

} // namespace attnscope
